import type { proto, WAMessage, WAMessageKey } from '@whiskeysockets/baileys'
import type { MediaRef, Storage } from 'zapgate'
import { KeyedLock, supportsAtomic } from 'zapgate/adapter-kit'
import { sameScope, scopeOf, scopeOfRef, type MessageScope } from './message-scope.ts'
import type { BaileysModule } from './types.ts'

/** A remembered message: its key as the network knows it, and (for own sends and media) its content. */
export interface StoredMessage {
  key: StoredKey
  /** Base64 of the protobuf-encoded message content, when kept. */
  content?: string
  /** Milliseconds since the epoch. */
  timestamp?: number
  /** A reaction or a deletion (protocol message): kept for Baileys' retries and the duplicate check, never a target of one. */
  action?: true
  /** When it is forgotten (milliseconds since the epoch): `messageTtlMs` after it was remembered, whatever is written under its id since. Absent in records of zapgate 0.x before it: given one at their id's next write. Written by the remembering host's clock and read by the reader's (a device handed over): across hosts it holds within their skew (CLOCK_SKEW_ALLOWANCE_MS, 30 s, against a ttl of days); the entry's own store ttl is the store's. */
  until?: number
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

/** How often one write of an id's records is tried against other instances' writes. */
const MAX_UPDATE_ATTEMPTS = 10

/**
 * Keys of messages a device sent or received, in the Storage port under `<prefix><id>` with a TTL:
 * delete-for-everyone needs the key of the gateway's own send, reactions and read receipts the key as
 * received (with `participant` in groups), Baileys' retries the content of own sends, and large media
 * its media key for a later download. Ids are chosen by the sender's client, so one id may name
 * messages of several chats (or group senders): the entry holds one record, or an array of them in
 * the order they came, and callers pick theirs by chat (message-scope.ts). Writes of one id are
 * compare-and-sets, so two processes writing one id (a device handed over) drop neither's record.
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
    const content = this.lib.normalizeMessageContent(message.message)
    if (content?.reactionMessage || content?.protocolMessage) record.action = true
    await this.update(key.id, (records, now) => {
      const others = records.filter(stored => !sameKey(stored.key, key))
      return others.length >= MAX_PER_ID ? undefined : [...others, { ...record, until: now + this.ttlMs }]
    })
  }

  /** The remembered messages with this id, oldest first. */
  async all(id: string): Promise<StoredMessage[]> {
    const stored = await this.storage.get<StoredMessage | StoredMessage[]>(this.prefix + id)
    const now = Date.now()
    return (Array.isArray(stored) ? stored : stored ? [stored] : []).filter(record => (record.until ?? Infinity) > now)
  }

  /** Forget a message (deleted for everyone): it is found no more; others with its id stay. */
  async forget(key: StoredKey): Promise<void> {
    await this.update(key.id, records => records.filter(stored => !sameKey(stored.key, key)))
  }

  /** Forget the messages with this id of one scope (message-scope.ts: deleted for everyone by their sender); others with the id stay. */
  async forgetScope(id: string, scope: MessageScope): Promise<void> {
    await this.update(id, records => records.filter(stored => !sameScope(scopeOf(stored.key), scope)))
  }

  /**
   * The content of a remembered message (Baileys' getMessage: a retry request answers with it, re-encrypted to
   * whoever asked) of the key's scope only (message-scope.ts): an own message for a fromMe key, never a message
   * of another chat (or direction) that reuses the id, which would hand its content to the asker.
   */
  async content(key: WAMessageKey): Promise<proto.IMessage | undefined> {
    const scope = scopeOf(key)
    const stored = (await this.all(key.id ?? '')).find(stored => stored.content && sameScope(scopeOf(stored.key), scope))
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

  /**
   * Replace the records of `id` by `change(records)` (undefined: leave them), serialised in this process and, on a store with
   * atomic steps, by compare-and-set: another instance writing the id meanwhile (a device handed over) makes this write read
   * again, so neither drops the other's record.
   */
  private async update(id: string, change: (records: StoredMessage[], now: number) => StoredMessage[] | undefined): Promise<void> {
    const key = this.prefix + id
    const atomic = supportsAtomic(this.storage) ? this.storage : undefined
    await this.lock.run(id, async () => {
      for (let attempt = 0; attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
        const stored = await this.storage.get<StoredMessage | StoredMessage[]>(key)
        // Each record keeps its own expiry (one without: a ttl from now); the entry lives as long as its last record.
        const now = Date.now()
        const live = (Array.isArray(stored) ? stored : stored ? [stored] : [])
          .map(record => ({ ...record, until: record.until ?? now + this.ttlMs }))
          .filter(record => record.until > now)
        const next = change(live, now)
        if (!next) return
        const value = next.length === 1 ? next[0] : next
        const ttlMs = Math.max(1, ...next.map(record => record.until! - now))
        if (!atomic) return void (await (next.length === 0 ? this.storage.delete(key) : this.storage.set(key, value, ttlMs))) // one process: the lock suffices
        const done =
          next.length === 0 ? stored === undefined || (await atomic.deleteIfEqual(key, stored)) : await atomic.compareAndSet(key, stored, value, ttlMs)
        if (done) return
      }
      throw new Error(`message ${id}: its records kept changing under this write`)
    })
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
