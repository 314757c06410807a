import type { Button, IncomingContent, IncomingMessage, MediaKind } from 'zapgate'

/** What a simulated phone sends (the `/_sim/send` body without `from` and `to`). */
export type PhoneMessage =
  | { type: 'text'; text: string }
  /** Media, with the fields the device receives it with (`base64`: the bytes, when the test wants them inline). */
  | ({ type: MediaKind } & Pick<Extract<IncomingContent, { kind: MediaKind }>, 'caption' | 'fileName' | 'mimetype' | 'base64' | 'voiceNote'>)
  | { type: 'contact'; name: string; phone: string }
  /** `name` is accepted as a synonym of `text` (the port's field name). */
  | { type: 'location'; latitude: number; longitude: number; text?: string; name?: string }
  /** An empty emoji removes the reaction. */
  | { type: 'reaction'; target: string; emoji: string }
  | { type: 'delete'; target: string }
  /** A tap on a button (or a list row, `list` true) of message `target`. */
  | { type: 'button'; target: string; buttonId: string; text?: string; list?: boolean }

/** A carousel card as a phone's inbox shows it (the image as its description, never its bytes). */
export interface InboxCard {
  title: string
  subtitle?: string
  description?: string
  image: { mimetype: string; fileName?: string; bytes: number }
  buttons: Button[]
}

/** The content of an inbox entry: the field names of DESIGN.md ("The simulated network"). */
export type InboxContent =
  | { type: 'text'; text: string }
  | { type: MediaKind; caption?: string; fileName?: string; mimetype?: string; bytes?: number; voiceNote?: boolean }
  | { type: 'contact'; name: string; phone: string }
  | { type: 'location'; latitude: number; longitude: number; text?: string }
  | { type: 'buttons'; text: string; header?: string; footer?: string; buttons: Button[] }
  | { type: 'carousel'; text: string; footer?: string; cards: InboxCard[] }
  | { type: 'reaction'; target: string; emoji: string }
  | { type: 'delete'; target: string }
  | { type: 'read'; target: string }
  | { type: 'button'; target: string; buttonId: string; text?: string; list?: boolean }

/** One thing a simulated phone received: `{id, from, type, ...content, group?, timestamp}`. */
export type InboxEntry = { id: string; from: string } & InboxContent & { group?: string; timestamp: number }

/** A failure injected into a device's network calls (see MemoryNetwork.setFault). */
export type Fault = 'hang' | 'fail' | 'rate-limit' | 'timeout'

/** How the network presents a simulated phone to others. */
export interface PhoneProfile {
  /** The phone's network user id (`<digits>@lid`); `true` picks a deterministic one. */
  lid?: string | true
  /** Display name carried by its messages. */
  pushName?: string
  /** Hide the number: receivers see only the LID (as `fromLid`, and as the chat of 1:1 messages). */
  hidePhone?: boolean
}

/** Sizes that keep the network's memory flat. */
export interface MemoryNetworkOptions {
  /** Messages remembered for validating reaction, delete, read and button targets (default 100 000). */
  logLimit?: number
  /** Entries kept per phone inbox, oldest dropped first (default 1 000). */
  inboxLimit?: number
  /** Phones whose inbox and profile are kept, least recently used dropped first (default 10 000). */
  phoneLimit?: number
  /** Messages queued for a linked device while it is offline (default 1 000). */
  offlineLimit?: number
  /** Groups kept (default 10 000). */
  groupLimit?: number
  /** Media sent between devices up to this many bytes reaches the receiver inline as base64 (default 256 KiB). */
  inlineMediaBytes?: number
}

/**
 * How the network reaches a transport that holds a device (one object per transport; internal to
 * the adapter).
 */
export interface DeviceEndpoint {
  /** A pending link of `deviceId` was completed by `phone`. */
  linked(deviceId: string, phone: string): Promise<void>
  /** A message for the device. */
  receive(deviceId: string, message: IncomingMessage): Promise<void>
  /** The network closed the session: another client took it, or the phone unlinked it. */
  closed(deviceId: string, state: 'replaced' | 'logged-out', reason: string): Promise<void>
}
