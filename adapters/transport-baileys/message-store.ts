import type { proto, WAMessage, WAMessageKey } from '@whiskeysockets/baileys'
import type { Storage } from 'zapgate'
import type { BaileysModule } from './types.ts'

/** A remembered message: its key as the network knows it, and (for own sends and media) its content. */
export interface StoredMessage {
  key: StoredKey
  /** Base64 of the protobuf-encoded message content, when kept. */
  content?: string
  /** Milliseconds since the epoch. */
  timestamp?: number
}

/** The parts of a message key the adapter needs again (delete, react, read receipts, re-upload). */
interface StoredKey {
  remoteJid: string
  fromMe: boolean
  id: string
  participant?: string
  remoteJidAlt?: string
  participantAlt?: string
}

/**
 * Keys of messages a device sent or received, in the Storage port under `<prefix><id>` with a TTL:
 * delete-for-everyone needs the key of the gateway's own send, reactions and read receipts the key as
 * received (with `participant` in groups), Baileys' retries the content of own sends, and large media
 * its media key for a later download.
 */
export class MessageStore {
  constructor(
    private readonly storage: Storage,
    private readonly prefix: string,
    private readonly ttlMs: number,
    private readonly lib: BaileysModule,
  ) {}

  /** Remember a message; `withContent` keeps its content too (own sends, media). */
  async remember(message: WAMessage, withContent: boolean): Promise<void> {
    const key = storedKey(message.key)
    if (!key) return
    const record: StoredMessage = { key }
    if (withContent && message.message) record.content = Buffer.from(this.lib.proto.Message.encode(message.message).finish()).toString('base64')
    const seconds = Number(message.messageTimestamp ?? 0)
    if (seconds > 0) record.timestamp = seconds * 1000
    await this.storage.set(this.prefix + key.id, record, this.ttlMs)
  }

  /** The remembered message with this id, if any. */
  find(id: string): Promise<StoredMessage | undefined> {
    return this.storage.get<StoredMessage>(this.prefix + id)
  }

  /** Forget a message (deleted for everyone): later finds answer undefined. */
  async forget(id: string): Promise<void> {
    await this.storage.delete(this.prefix + id)
  }

  /** The content of a remembered message (Baileys' getMessage, for retries of own sends). */
  async content(id: string): Promise<proto.IMessage | undefined> {
    const stored = await this.find(id)
    return stored?.content ? this.lib.proto.Message.decode(Buffer.from(stored.content, 'base64')) : undefined
  }

  /** A remembered message rebuilt as a WAMessage (for media downloads), when its content was kept. */
  async message(id: string): Promise<WAMessage | undefined> {
    const stored = await this.find(id)
    if (!stored?.content) return undefined
    const message = this.lib.proto.Message.decode(Buffer.from(stored.content, 'base64'))
    return { key: { ...stored.key }, message, ...(stored.timestamp ? { messageTimestamp: Math.floor(stored.timestamp / 1000) } : {}) }
  }
}

/** The storable part of a WAMessageKey, or undefined without chat or id. */
function storedKey(key: WAMessageKey): StoredKey | undefined {
  if (!key.remoteJid || !key.id) return undefined
  const stored: StoredKey = { remoteJid: key.remoteJid, fromMe: Boolean(key.fromMe), id: key.id }
  if (key.participant) stored.participant = key.participant
  if (key.remoteJidAlt) stored.remoteJidAlt = key.remoteJidAlt
  if (key.participantAlt) stored.participantAlt = key.participantAlt
  return stored
}

/** A WAMessageKey for Baileys from a stored key (only the fields the protocol reads). */
export function messageKey(key: StoredKey): WAMessageKey {
  return { remoteJid: key.remoteJid, fromMe: key.fromMe, id: key.id, ...(key.participant ? { participant: key.participant } : {}) }
}
