import type {
  AnyMessageContent,
  BaileysEventMap,
  Contact,
  GroupMetadata,
  MessageRelayOptions,
  MiscMessageGenerationOptions,
  proto,
  UserFacingSocketConfig,
  WAMediaUploadFunction,
  WAMessage,
  WAMessageKey,
} from '@whiskeysockets/baileys'
import type { Agent } from 'node:http'
import type { Readable } from 'node:stream'
import type { Logger } from 'zapgate'

/** The Baileys module (loaded lazily: users of other transports never load it). */
export type BaileysModule = typeof import('@whiskeysockets/baileys')

/** The event side of a Baileys socket, as far as the adapter uses it. */
export interface SocketEvents {
  on<E extends keyof BaileysEventMap>(event: E, listener: (arg: BaileysEventMap[E]) => void): unknown
  off<E extends keyof BaileysEventMap>(event: E, listener: (arg: BaileysEventMap[E]) => void): unknown
  /** Emit the events Baileys buffered (a fake may leave it out). */
  flush?(): unknown
}

/**
 * What the adapter needs of a Baileys socket. A real `WASocket` satisfies it (checked where the default
 * factory builds one); tests pass a fake (test/helpers/fake-baileys/index.ts).
 */
export interface SocketLike {
  ev: SocketEvents
  /** The linked account (`id` carries `:<device>`, `lid` the account's LID), once known. */
  readonly user: Contact | undefined
  end(error: Error | undefined): Promise<void>
  logout(msg?: string): Promise<void>
  sendMessage(jid: string, content: AnyMessageContent, options?: MiscMessageGenerationOptions): Promise<WAMessage | undefined>
  relayMessage(jid: string, message: proto.IMessage, options: MessageRelayOptions): Promise<string>
  readMessages(keys: WAMessageKey[]): Promise<void>
  onWhatsApp(...phoneNumber: string[]): Promise<{ jid: string; exists: boolean }[] | undefined>
  /** The devices of users (a USync device query, cached by Baileys): none for a LID no account has (optional: a fake may leave it out). */
  getUSyncDevices?(jids: string[], useCache: boolean, ignoreZeroDevices: boolean): Promise<{ user: string; device?: number; jid: string }[]>
  requestPairingCode(phoneNumber: string, customPairingCode?: string): Promise<string>
  groupMetadata(jid: string): Promise<GroupMetadata>
  groupGetInviteInfo(code: string): Promise<GroupMetadata>
  groupCreate(subject: string, participants: string[]): Promise<GroupMetadata>
  groupAcceptInvite(code: string): Promise<string | undefined>
  groupInviteCode(jid: string): Promise<string | undefined>
  updateMediaMessage(message: WAMessage): Promise<WAMessage>
  waUploadToServer: WAMediaUploadFunction
  /** LID to phone number mappings the socket has seen (optional: a fake may leave it out). */
  signalRepository?: { lidMapping: { getPNForLID(lid: string): Promise<string | null> } }
  /**
   * The socket's WebSocket client (Baileys' WebSocketClient re-emits ws's events): the adapter
   * listens for `unexpected-response`, a refused upgrade that Baileys never turns into a close.
   */
  ws?: SocketWire
}

/** The event side of a socket's WebSocket client, as far as the adapter uses it. */
export interface SocketWire {
  on(event: 'unexpected-response', listener: (request: unknown, response: { statusCode?: number; resume?(): unknown }) => void): unknown
  off(event: 'unexpected-response', listener: (request: unknown, response: { statusCode?: number; resume?(): unknown }) => void): unknown
}

/** Which device a socket is for, handed to the factory with the socket config. */
export interface SocketInfo {
  deviceId: string
}

/**
 * Creates one device's socket from a complete Baileys config. The default calls Baileys' makeWASocket,
 * which connects at once; every reconnect is a new call.
 */
export type SocketFactory = (config: UserFacingSocketConfig, info: SocketInfo) => SocketLike | Promise<SocketLike>

/**
 * Downloads the bytes of a received media message (default: the adapter's own download, MAC checked,
 * with a re-upload request through `socket` when given; through `agent`, the device's proxy, when it
 * has one). `maxBytes` (media inlined in message events): a file larger than this may fail the
 * download instead of being read whole (a message's announced size is the sender's word, or absent).
 * It may answer a stream (read as `GET /media/:token` answers, so memory stays bounded; the default
 * does without `maxBytes`), which must fail rather than end when its file is cut or corrupt.
 */
export type MediaDownloader = (
  message: WAMessage,
  context: { socket?: SocketLike; logger: Logger; agent?: Agent; maxBytes?: number },
) => Promise<Buffer | Readable>
