/**
 * The agent responder: the host's brain behind the AI agents of operation 2 (a rule set, an LLM
 * client, a human hand-off...). The gateway calls it for each incoming 1:1 text on a device with an
 * agent and sends back what it answers.
 */
export interface AgentResponder {
  /** The reply to send (trimmed; empty or undefined: no reply; past 65,536 characters, WhatsApp's limit: none, logged). Called one at a time per contact. */
  respond(request: AgentRequest): AgentReply | Promise<AgentReply>
}

/** A reply text, or nothing to send. */
export type AgentReply = string | undefined | null

/** What a responder gets for one incoming text. */
export interface AgentRequest {
  /** The device's active agent (its newest, operation 2). */
  agent: { id: string; name: string }
  /** The device the text arrived on. */
  device: { id: string; name: string; phone?: string }
  /** Who wrote: the phone digits and/or the LID, the display name, and the chat to answer in. */
  contact: AgentContact
  /** The text received. */
  text: string
  /** Earlier turns of this contact's flow conversation, oldest first (bounded; emptied by operation 19). */
  history: AgentTurn[]
  /** Aborted when the gateway stops waiting (the agent time-out, or shutdown): pass it to fetch. */
  signal: AbortSignal
}

/** The other party of a flow conversation. */
export interface AgentContact {
  /** Phone digits, when the network shows the number. */
  phone?: string
  /** Network user id (`<digits>@lid`), when known. */
  lid?: string
  /** Display name, when the network gave one. */
  name?: string
  /** Where the reply goes (the phone, or the LID when the number is hidden). */
  chat: string
}

/** One turn of a flow conversation: what the contact wrote, or what the agent answered. */
export interface AgentTurn {
  role: 'contact' | 'agent'
  text: string
  /** Milliseconds since the epoch. */
  at: number
}
