import type { IncomingContent, LinkChallenge, OutgoingMessage, Transport, TransportEvent } from '../ports/transport.ts'

/** One send as the network side saw it. */
export interface SentRecord {
  /** The id the network gave the message (what `send` resolved with). */
  id: string
  /** Recipient: phone digits, or the group id. */
  to: string
  kind: OutgoingMessage['kind']
  /** The text, for text messages. */
  text?: string
  /** For a reaction or a delete: the network id of the message it is about. */
  target?: string
  /** For a reaction: the emoji (empty: the reaction removed). */
  emoji?: string
}

/** A read receipt as the network saw it: the device read message `id` of `chat`. */
export interface ReceiptRecord {
  /** The chat the message is in: the sender's phone digits, or the group id. */
  chat: string
  /** The network id of the message read. */
  id: string
}

/** A message the network delivers to a device, as the contract describes it. */
export interface IncomingSpec {
  /** Sender phone (digits). */
  from: string
  /** Group id, for a message to a group the device belongs to. */
  group?: string
  content: IncomingContent
}

/**
 * The network side of a transport under test: the memory network, or a fake socket for an adapter
 * over a real network library. The harness starts `transport` with a context whose `emit` appends to
 * `events` and whose storage survives `restart`.
 */
export interface TransportHarness {
  /** The transport under test (after `restart`, the new one). */
  transport: Transport
  /** Every event emitted so far (by every transport of this harness), oldest first. */
  events: TransportEvent[]
  /** Complete a pending link as `phone` would: scan the QR or enter the pairing code. */
  completeLink(deviceId: string, challenge: LinkChallenge, phone: string): Promise<void>
  /** The network delivers a message to the device; resolves with the message's network id. */
  deliver(deviceId: string, incoming: IncomingSpec): Promise<string>
  /** What the device has sent to the network, oldest first. */
  sent(deviceId: string): Promise<SentRecord[]>
  /** The read receipts the device has sent to the network (what the senders of the messages got), oldest first. */
  receipts(deviceId: string): Promise<ReceiptRecord[]>
  /** A process restart: stop the transport, start a new one over the same storage (and network). */
  restart(): Promise<void>
  /** Release everything (timers, sockets). */
  close(): Promise<void>
}

/** Behaviours only some networks show; their tests are registered only when set. */
export interface ContractOptions {
  /** markRead, reaction and delete check that the target message exists (else throw not-found). */
  validatesTargets?: boolean
}

/** Registers one case of the contract (skipped when it needs an option the harness lacks). */
export type ContractCase = (name: string, body: (h: TransportHarness) => Promise<void>, needs?: keyof ContractOptions) => void
