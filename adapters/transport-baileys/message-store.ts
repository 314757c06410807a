import type { proto, WAMessage, WAMessageKey } from '@whiskeysockets/baileys'
import type { MediaRef, Storage } from 'zapgate'
import { KeyedLock } from 'zapgate/adapter-kit'
import { sameScope, scopeOf, scopeOfRef } from './message-scope.ts'
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

/** At most this many messages are kept under one id (ids are the sender's choice: a contact may reuse any). */
export const MAX_PER_ID = 8

/**
 * Keys of messages a device sent or received, in the Storage port under `<prefix><id>` with a TTL:
 * delete-for-everyone needs the key of the gateway's own send, reactions and read receipts the key as
 * received (with `participant` in groups), Baileys' retries the content of own sends, and large media
 * its media key for a later download. Ids are chosen by the sender's client, so one id may name
 * messages of several chats (or group senders): the entry holds one record, or an array of them in
 * the order they came, and callers pick theirs by chat (message-scope.ts). Writes of one id are
 * serialised (a device's messages are handled by one process).
 */
export class MessageStore {
  private readonly lock = new KeyedLock()

  constructor(
    private readonly storage: Storage,
    private readonly prefix: string,
    private readonly ttlMs: number,
    private readonly lib: BaileysModule,
  ) {}

  /** Remember a message (replacing a record of the same key); `withContent` keeps its content too (own sends, media). */
  async remember(message: WAMessage, withContent: boolean): Promise<void> {
    const key = storedKey(message.key)
    if (!key) return
    const record: StoredMessage = { key }
    if (withContent && message.message) record.content = Buffer.from(this.lib.proto.Message.encode(message.message).finish()).toString('base64')
    const seconds = Number(message.messageTimestamp ?? 0)
    if (seconds > 0) record.timestamp = seconds * 1000
    await this.lock.run(key.id, async () => {
      const others = (await this.all(key.id)).filter(stored => !sameKey(stored.key, key))
      if (others.length >= MAX_PER_ID) return
      await this.write(key.id, [...others, record])
    })
  }

  /** The remembered messages with this id, oldest first. */
  async all(id: string): Promise<StoredMessage[]> {
    const stored = await this.storage.get<StoredMessage | StoredMessage[]>(this.prefix + id)
    return Array.isArray(stored) ? stored : stored ? [stored] : []
  }

  /** Forget a message (deleted for everyone): it is found no more; others with its id stay. */
  async forget(key: StoredKey): Promise<void> {
    await this.lock.run(key.id, async () => {
      const others = (await this.all(key.id)).filter(stored => !sameKey(stored.key, key))
      await this.write(key.id, others)
    })
  }

  /** The content of a remembered message (Baileys' getMessage, for retries of own sends), of the key's direction first. */
  async content(key: WAMessageKey): Promise<proto.IMessage | undefined> {
    const kept = (await this.all(key.id ?? '')).filter(stored => stored.content)
    const stored = kept.find(stored => stored.key.fromMe === Boolean(key.fromMe)) ?? kept[0]
    return stored?.content ? this.lib.proto.Message.decode(Buffer.from(stored.content, 'base64')) : undefined
  }

  /**
   * The remembered message `target` names, its content kept, rebuilt as a WAMessage (for media
   * downloads): the one of its scope (message-scope.ts), never another with its id; for an id alone
   * (a media link of zapgate 0.1.0 or earlier), the one message kept under that id. Undefined when
   * none, or several and the target cannot tell which.
   */
  async message(target: MediaRef): Promise<WAMessage | undefined> {
    const scope = target.chat === undefined ? undefined : scopeOfRef(target)
    const kept = (await this.all(target.id)).filter(stored => stored.content && (!scope || sameScope(scopeOf(stored.key), scope)))
    const stored = kept.length === 1 ? kept[0] : undefined
    if (!stored?.content) return undefined
    const message = this.lib.proto.Message.decode(Buffer.from(stored.content, 'base64'))
    return { key: { ...stored.key }, message, ...(stored.timestamp ? { messageTimestamp: Math.floor(stored.timestamp / 1000) } : {}) }
  }

  private async write(id: string, records: StoredMessage[]): Promise<void> {
    if (records.length === 0) await this.storage.delete(this.prefix + id)
    else await this.storage.set(this.prefix + id, records.length === 1 ? records[0] : records, this.ttlMs)
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

/** Whether two stored keys name one message as the network does (chat, direction, group sender; id alike). */
function sameKey(a: StoredKey, b: StoredKey): boolean {
  return a.remoteJid === b.remoteJid && a.fromMe === b.fromMe && a.participant === b.participant
}

/** A WAMessageKey for Baileys from a stored key (only the fields the protocol reads). */
export function messageKey(key: StoredKey): WAMessageKey {
  return { remoteJid: key.remoteJid, fromMe: key.fromMe, id: key.id, ...(key.participant ? { participant: key.participant } : {}) }
}
