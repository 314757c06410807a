import type { Button, GroupInfo, GroupRef, IncomingContent, IncomingMessage, MediaKind, MessageRef, OutgoingMessage, SentMessage } from 'zapgate'

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

/** What a scan issues to a linked device: the transport keeps it and shows it to open the device again. */
export interface DeviceCredentials {
  /** The phone the device is linked to (digits). */
  phone: string
  /** A random secret the network checks when the device connects (absent for links made before credentials existed). */
  secret?: string
}

/** How a device's connection attempt ended: open (with the phone's LID, if any), refused, or (simulator server only) still being retried. */
export type ConnectResult = { state: 'open'; lid?: string } | { state: 'logged-out'; reason: string } | { state: 'connecting'; reason: string }

/** Counts since the network started (`GET /_sim/stats`). */
export interface NetworkStats {
  /** Device connections open now. */
  connections: number
  /** Connections closed because the same device connected again. */
  replaced: number
  /** Messages devices sent. */
  sent: number
  /** Messages simulated phones sent that reached at least one linked device (online or queued). */
  received: number
  /** Messages queued for devices that are offline now (handed over when they connect again). */
  waiting: number
}

/**
 * How the network reaches a transport that holds a device (one object per transport; internal to
 * the adapter).
 */
export interface DeviceEndpoint {
  /** A pending link of `deviceId` was completed: keep the credentials, then connect with them. */
  linked(deviceId: string, credentials: Required<DeviceCredentials>): Promise<void>
  /** A message for the device. */
  receive(deviceId: string, message: IncomingMessage): Promise<void>
  /** The network closed the session: another client took it, or the phone unlinked it. Final. */
  closed(deviceId: string, state: 'replaced' | 'logged-out', reason: string): Promise<void>
  /** Simulator server only: the connection was lost and is being retried. */
  interrupted?(deviceId: string, reason: string): Promise<void>
  /** Simulator server only: a lost (or not yet made) connection is open again. */
  resumed?(deviceId: string, lid: string | undefined): Promise<void>
}

/** A pending link's challenge: a QR, or a pairing code for one phone. */
export type LinkChallengeSpec = { qr: string } | { code: string; phone: string }

/**
 * The device side of a network, as a MemoryTransport uses it: the in-process MemoryNetwork, or a
 * simulator server reached over HTTP (RemoteNetwork). Every call names the endpoint it acts for, so
 * a connection that was replaced can no longer act.
 */
export interface DeviceNetwork {
  /** Wait for a phone to complete `challenge` (replacing the device's earlier challenge); resolves once a scan can complete it. */
  beginLink(deviceId: string, endpoint: DeviceEndpoint, challenge: LinkChallengeSpec): Promise<void>
  /** Drop the device's pending link, if this endpoint made it. */
  cancelLink(deviceId: string, endpoint: DeviceEndpoint): Promise<void>
  /** Open the device's connection with its credentials; an open connection elsewhere is closed as `replaced`. */
  connect(deviceId: string, credentials: DeviceCredentials, endpoint: DeviceEndpoint): Promise<ConnectResult>
  /** The transport announced the open session: deliver what was queued while the device was away. */
  flush(deviceId: string, endpoint: DeviceEndpoint): Promise<void>
  /** Close this endpoint's connection of the device (it stays linked). */
  disconnect(deviceId: string, endpoint: DeviceEndpoint): Promise<void>
  /** Unlink the device (its credentials stop working); a connection held elsewhere closes as `logged-out`. Cut off by `signal` before the network heard of it, it rejects and changes nothing. */
  logout(deviceId: string, credentials: DeviceCredentials | undefined, endpoint: DeviceEndpoint, signal?: AbortSignal): Promise<void>
  sendFromDevice(deviceId: string, to: string, message: OutgoingMessage, endpoint: DeviceEndpoint): Promise<SentMessage>
  markRead(deviceId: string, target: MessageRef, endpoint: DeviceEndpoint): Promise<void>
  groupInfo(deviceId: string, ref: GroupRef, endpoint: DeviceEndpoint): Promise<GroupInfo | undefined>
  groupCreate(deviceId: string, subject: string, participants: string[], endpoint: DeviceEndpoint): Promise<GroupInfo>
  groupJoin(deviceId: string, invite: string, endpoint: DeviceEndpoint): Promise<string | undefined>
  /** Release what the network keeps for this endpoint (the simulator server's connections). */
  close?(endpoint: DeviceEndpoint): Promise<void>
  /** Throws when the network cannot be reached (a simulator server down): what `/health` asks. */
  ping?(): Promise<void>
}
