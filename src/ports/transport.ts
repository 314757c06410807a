import type { Readable } from 'node:stream'
import type { Storage } from './storage.ts'
import type { Logger } from '../logger.ts'

/**
 * The transport port: one messaging-network session per device. The default is Baileys
 * (adapters/transport-baileys); adapters/transport-memory is a simulated network with the same
 * behaviour as far as the gateway can tell. Every method names the device it acts for.
 *
 * Addresses (`to`, `chat`): a phone number as digits with the country code (`5511999990000`), a group
 * id (`<digits>@g.us`), or a network user id (`...@s.whatsapp.net`, `...@lid`).
 */
export interface Transport {
  /** Called once by createGateway before any other method. */
  start(context: TransportContext): Promise<void>
  /**
   * Open (or resume) the device's session. With stored credentials the session reconnects without a
   * new link; without them it waits for `link`. Idempotent.
   */
  connect(deviceId: string): Promise<void>
  /**
   * Begin linking a device that is not connected: a QR string, or, when `phone` is given, the
   * pairing `code` chosen by the gateway (8 characters) for that phone. Later QR refreshes arrive as
   * `qr` events. Throws TransportError('already-connected') when the device is connected.
   */
  link(deviceId: string, request: LinkRequest): Promise<LinkChallenge>
  /** Current state of the device's session (never throws for an unknown device: it is `closed`). */
  status(deviceId: string): Promise<SessionStatus>
  /**
   * Optional: what `status` would answer now, without waiting, for a session this process has in
   * memory; undefined when it has none (the gateway then asks `status`). A send checks it first, which
   * spares it a promise and a time-out watch.
   */
  statusNow?(deviceId: string): SessionStatus | undefined
  /**
   * Unlink the device from the network and delete all its session state (credentials, keys). The gateway
   * aborts `signal` when its deadline passes (`sendTimeoutMs`) and then waits for the answer (up to as long
   * again): a transport that sees it aborted before it unlinked gives up, keeps everything and rejects, so
   * a deletion the gateway answers as failed never unlinks or deletes the device afterwards.
   */
  logout(deviceId: string, signal?: AbortSignal): Promise<void>
  /** Close the device's session without unlinking (it can resume later). */
  disconnect(deviceId: string): Promise<void>
  /** Send one message; resolves with the network's id for it. */
  send(deviceId: string, to: string, message: OutgoingMessage): Promise<SentMessage>
  /** Send a read receipt for a received message. */
  markRead(deviceId: string, target: MessageRef): Promise<void>
  /** Group metadata by id (`...@g.us`) or by invite code; undefined when there is no such group. */
  groupInfo(deviceId: string, group: GroupRef): Promise<GroupInfo | undefined>
  /** Create a group with the device as admin; participants are phone numbers. */
  groupCreate(deviceId: string, subject: string, participants: string[]): Promise<GroupInfo>
  /**
   * Join a group by invite code: the group id, or a GroupJoinRequest when the group requires admin
   * approval (the network sent a request instead); undefined when the invite is invalid or expired.
   */
  groupJoin(deviceId: string, inviteCode: string): Promise<string | GroupJoinRequest | undefined>
  /** Close every session (without unlinking) and release resources. Also called when `start` threw (createGateway then fails): let go of what it had opened. */
  stop(): Promise<void>
  /**
   * Optional: the bytes of a received media message that was not inlined as base64 (too large), or
   * undefined when the device remembers no such message or it is not media. When present, the gateway
   * gives media events a `url` that serves them (needs `baseUrl`). See MediaRef: never the media of
   * another message with the same id. The bytes may be a stream (ReceivedMedia), served as they come.
   */
  downloadMedia?(deviceId: string, target: MediaRef): Promise<ReceivedMedia | undefined>
  /** Reachability probe for health checks; throws when the network cannot be reached. */
  ping?(): Promise<void>
}

/** What createGateway hands a transport. */
export interface TransportContext {
  /** A storage namespace reserved for the transport (auth state, message keys). */
  storage: Storage
  logger: Logger
  /**
   * Report something that happened on the network, in the order it happened: the gateway keeps each device's
   * state from its status events, so once a transition is done the device's latest status event says what
   * `status` answers (a stale `linking` arriving after the `open` would show the device unlinked). Never
   * throws; returns once recorded, or once kept to be recorded later (the store is down: in memory, then a
   * spill file; see docs/api.md, Delivery).
   */
  emit(event: TransportEvent): Promise<void>
}

/** How to link: by QR (no phone) or by pairing code for `phone`. */
export interface LinkRequest {
  /** Phone number (digits) that will enter the pairing code; absent for QR linking. */
  phone?: string
  /** The 8-character pairing code the gateway chose; present exactly when `phone` is. */
  code?: string
}

/** A challenge the user completes on the phone. */
export type LinkChallenge = { kind: 'qr'; qr: string } | { kind: 'code'; code: string }

/** Lifecycle of a device session. */
export type SessionState =
  | 'closed' // no session (never linked, or logged out)
  | 'connecting' // opening or resuming
  | 'linking' // waiting for a QR scan or pairing code
  | 'open' // connected and usable
  | 'replaced' // another client took the session; not reconnected automatically
  | 'logged-out' // unlinked from the phone; needs a new link

/** Session status as the gateway reports it. */
export interface SessionStatus {
  state: SessionState
  connected: boolean
  /** Linked phone number (digits), once known. */
  phone?: string
  /** Network user id (e.g. a LID), when the network has one. */
  lid?: string
  /** Last error or disconnect reason, for diagnostics. */
  reason?: string
  /** Closed by the network's refusal of the account (blocked, banned): the gateway does not open it again by itself (a link, or the next start, does). */
  refused?: boolean
}

/** Identifies a message on the network: its chat and id. */
export interface MessageRef {
  chat: string
  id: string
  /** Sender inside a group, when known. */
  participant?: string
  /** Whether the device itself sent it, when known. */
  fromMe?: boolean
}

/**
 * The media message `downloadMedia` serves. Ids are chosen by the sender's client and name a message
 * only within its chat, direction and (in a group) sender, so the gateway names it as its message
 * event did: `chat`, `fromMe` and, in a group, `participant` (the sender's `fromLid`, else `from`);
 * the transport serves that message only. A media link signed by zapgate 0.1.0 or earlier knows the
 * id alone (`chat` absent): the transport serves it only when the id names one remembered message.
 */
export type MediaRef = MessageRef | { id: string; chat?: undefined }

/** A group, by its id or by an invite code (or link). */
export type GroupRef = { id: string } | { invite: string }

/** A join by invite the network took as a request to the group's admins (the group requires approval): the device is no member until one approves. */
export interface GroupJoinRequest {
  /** The group's id (`...@g.us`). */
  id: string
  awaitingApproval: true
}

/** Group metadata. */
export interface GroupInfo {
  id: string
  subject: string
  description?: string
  /** Each member: its network id (a LID in a group addressed by LID), its phone digits when the network shows them, its admin flag. */
  participants: { id: string; phone?: string; admin: boolean }[]
  inviteCode?: string
}

/** Result of a send. */
export interface SentMessage {
  id: string
  /** Milliseconds since the epoch. */
  timestamp: number
  /**
   * The chat as the network names it, named as IncomingMessage names chats, when the transport knows it:
   * `to` may name it otherwise (a Brazilian mobile written with its ninth digit and registered without
   * it, a LID whose phone is known). The device's sent text is reported in this chat; absent: in `to`.
   */
  chat?: string
}

/** A button of a buttons message. */
export type Button = { type: 'reply'; id: string; text: string } | { type: 'url'; text: string; url: string } | { type: 'call'; text: string; phone: string }

/** A carousel card. The image is fetched by the gateway before sending. */
export interface Card {
  image: MediaPayload
  title: string
  subtitle?: string
  description?: string
  buttons: Button[]
}

/** Media bytes and their description. */
export interface MediaPayload {
  data: Buffer
  mimetype: string
  fileName?: string
}

/**
 * Received media as `downloadMedia` gives it: its bytes whole, or a stream read while `GET /media/:token`
 * answers (memory bounded by the stream's buffers, whatever the file's size). A stream must fail
 * (emit 'error') when its file turns out incomplete or corrupt, even after its last bytes: that cuts
 * the answer's connection, so the client never takes a shorter file for the whole one.
 */
export interface ReceivedMedia {
  data: Buffer | Readable
  mimetype: string
  fileName?: string
}

/** Media kinds, as the network distinguishes them. */
export type MediaKind = 'image' | 'video' | 'audio' | 'document'

/** Everything the gateway can send. */
export type OutgoingMessage =
  | { kind: 'text'; text: string }
  | { kind: 'media'; media: MediaKind; file: MediaPayload; caption?: string; voiceNote?: boolean }
  | { kind: 'contact'; name: string; phone: string }
  | { kind: 'location'; latitude: number; longitude: number; text?: string }
  /** An empty emoji removes the reaction. */
  | { kind: 'reaction'; target: MessageRef; emoji: string }
  | { kind: 'delete'; target: MessageRef }
  | { kind: 'buttons'; text: string; header?: string; footer?: string; buttons: Button[] }
  | { kind: 'carousel'; text: string; footer?: string; cards: Card[] }

/** The content of a received (or own sent) message. */
export type IncomingContent =
  | { kind: 'text'; text: string }
  | {
      kind: MediaKind
      caption?: string
      fileName?: string
      mimetype?: string
      /** Base64 of the bytes, when small enough to inline. */
      base64?: string
      /** Where the host can fetch the bytes from, when not inlined. */
      url?: string
      voiceNote?: boolean
    }
  /** One contact shared; several: the first here, and every one of them in `contacts`. */
  | { kind: 'contact'; name: string; phone?: string; vcard?: string; contacts?: SharedContact[] }
  | { kind: 'location'; latitude: number; longitude: number; name?: string }
  /** An empty emoji means the reaction was removed. */
  | { kind: 'reaction'; target: string; emoji: string }
  | { kind: 'delete'; target: string }
  /** A tap on a button (`list` false) or a list row (`list` true) of message `target`. */
  | { kind: 'button'; target?: string; buttonId: string; text?: string; list?: boolean }

/** A contact card of a received message. */
export interface SharedContact {
  name: string
  phone?: string
  vcard?: string
}

/** A message seen by a device. */
export interface IncomingMessage {
  id: string
  /** The chat: the other party's phone for 1:1 chats, or the group id. */
  chat: string
  /** Sender phone (digits), when known. */
  from?: string
  /** Sender's network user id (e.g. `...@lid`), when the network gave one. */
  fromLid?: string
  /** Recipient: the device's phone, the other party's phone (fromMe), or the group id. */
  to: string
  fromMe: boolean
  isGroup: boolean
  /** Group id, for group traffic. */
  group?: string
  /** Milliseconds since the epoch. */
  timestamp: number
  /** Sender's display name, when the network gave one. */
  pushName?: string
  content: IncomingContent
}

/** What a transport reports. */
export type TransportEvent =
  | { type: 'message'; deviceId: string; message: IncomingMessage }
  | { type: 'qr'; deviceId: string; qr: string }
  | { type: 'status'; deviceId: string; status: SessionStatus }
  /**
   * The network reports that a message the device sent was not delivered (WhatsApp: an error ack
   * such as 463 or 479). `messageId` is the id `send` answered; `chat` is named as in IncomingMessage.
   */
  | { type: 'message-failed'; deviceId: string; messageId: string; chat: string; code?: number; reason: string; timestamp: number }

/** Why a transport call failed; the gateway maps `code` to an HTTP answer. */
export class TransportError extends Error {
  constructor(
    readonly code:
      | 'not-connected' // 409
      | 'already-connected' // 409
      | 'not-found' // 404: unknown chat, group, invite or message
      | 'not-admin' // 403
      | 'rate-limited' // 429
      | 'timeout' // 504
      | 'unreachable' // 503: the messaging network cannot be reached from this server
      | 'invalid' // 400: the network refused the content
      | 'failed', // 502: anything else
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = 'TransportError'
  }
}
