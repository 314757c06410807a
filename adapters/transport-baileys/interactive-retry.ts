import type { BinaryNode, CacheStore, proto, WAMessageKey } from '@whiskeysockets/baileys'
import { BoundedMap } from 'zapgate/adapter-kit'
import { interactiveNodes } from './interactive.ts'
import type { BaileysLogger } from './logger.ts'
import type { BaileysModule, SocketLike } from './types.ts'

/** The parts of a real Baileys socket the resends use (a fake socket may have none: then Baileys' own resend stands). */
interface RetrySocket extends SocketLike {
  receiptMutex?: { mutex<T>(code: () => Promise<T>): Promise<T> }
  messageRetryManager?: { getRecentMessage(to: string, id: string): { message: proto.IMessage } | undefined } | null
}

/** Retry receipts seen and not yet answered are forgotten past this many askers' messages, and past this many receipts of one (a flood of them keeps no memory). */
const MAX_PENDING = 512
const MAX_PENDING_PER_MESSAGE = 8

/** Retry counts kept, oldest out first, each for an hour after its last write (Baileys' own cache keeps them an hour, without bound). */
const MAX_RETRY_COUNTS = 20_000
const RETRY_COUNT_TTL_MS = 60 * 60 * 1000

/**
 * The socket's `msgRetryCounterCache` when its config names none (Baileys then makes its own, which the
 * adapter cannot read): Baileys' retry counts, per received message id and per `<id>:<asker>` of the
 * device's messages sent again, which the adapter's resends count in too.
 */
export class RetryCounts implements CacheStore {
  private readonly entries = new BoundedMap<string, unknown>(MAX_RETRY_COUNTS, RETRY_COUNT_TTL_MS)

  get<T>(key: string): T | undefined {
    return this.entries.get(key) as T | undefined
  }

  set<T>(key: string, value: T): void {
    this.entries.set(key, value)
  }

  del(key: string): void {
    this.entries.delete(key)
  }

  flushAll(): void {
    this.entries.clear()
  }
}

/** Baileys' limit of resends: the socket's retry counts and its `maxMsgRetryCount`. */
interface ResendLimit {
  counts: CacheStore
  maxMsgRetryCount: number
}

/**
 * Interactive messages (buttons, carousels) sent again on a retry receipt with their `<biz>` node.
 * When a contact's device cannot decrypt one of our messages it sends a retry receipt, and Baileys
 * sends the message again from its recent-message cache or getMessage (messages-recv.js
 * sendMessagesAgain), through relayMessage with no additional nodes: an interactive message went out
 * with `<biz>` (interactive.ts) and its copy sent again without it, which WhatsApp delivers and does
 * not render as buttons. Baileys has no hook into that stanza, so for an interactive message (and only
 * for a getMessage call that answers a retry receipt this socket saw) Baileys is handed nothing: it
 * still prepares the session with the asker (the key bundle of the receipt, a fresh session) and then
 * finds no message; the resend is queued on Baileys' receipt queue behind that work and sends the
 * message as Baileys would (to every device of a primary asker, else to the asking device under the
 * receipt's count), with `<biz>`, once for each receipt seen (a second receipt arriving before the
 * first is answered is answered the same way, not handed to Baileys), under Baileys' own limit: the
 * socket's retry counts (`<id>:<asker>` in its msgRetryCounterCache) are checked against its
 * maxMsgRetryCount and counted up as Baileys does before it sends any message again, so an interactive
 * message is sent again no more often than a text (Baileys counts a retry receipt once on its own
 * before it asks getMessage, and does not count a message getMessage has no content for). A receipt
 * naming several messages (a `<list>` of `<item id>`) is taken for each of them, as Baileys asks
 * getMessage for each.
 */
export class InteractiveResends {
  private socket?: RetrySocket
  /** `<id> <asker>` of retry receipts seen: each receipt's retry count, oldest first (Baileys handles them one by one, each asking getMessage). */
  private readonly pending = new Map<string, number[]>()

  constructor(
    private readonly lib: BaileysModule,
    private readonly logger: BaileysLogger,
    private readonly limit: ResendLimit,
  ) {}

  /** Watch `socket`'s retry receipts, and keep interactive messages out of Baileys' recent-message cache answers. */
  attach(socket: RetrySocket): void {
    if (!socket.receiptMutex || typeof socket.ws?.on !== 'function') return
    this.socket = socket
    const manager = socket.messageRetryManager // none with enableRecentMessageCache: false (getMessage answers every retry)
    if (manager) {
      const recent = manager.getRecentMessage.bind(manager)
      manager.getRecentMessage = (to, id) => {
        const found = recent(to, id)
        return found && this.interactive(found.message) ? undefined : found // then getMessage: answered below
      }
    }
    ;(socket.ws as unknown as { on(event: string, listener: (node: BinaryNode) => void): unknown }).on('CB:receipt', node => this.sawReceipt(node))
  }

  /**
   * What getMessage answers Baileys for `key` whose remembered content is `content`: an interactive message
   * asked for by a retry receipt is sent again here (with `<biz>`) and Baileys gets nothing; anything else as is.
   */
  async answer(key: WAMessageKey, content: proto.IMessage | undefined): Promise<proto.IMessage | undefined> {
    const socket = this.socket
    const asker = key.participant ?? key.remoteJid
    const seen = `${key.id} ${asker}`
    const counts = this.pending.get(seen)
    if (!content || !socket?.receiptMutex || !counts || !asker || !key.remoteJid || !this.interactive(content)) return content
    const count = counts.shift()!
    if (counts.length === 0) this.pending.delete(seen)
    const { remoteJid, id } = key
    if (!(await this.countResend(`${id}:${asker}`))) {
      this.logger.debug({ id, asker }, 'interactive message not sent again: sent again too many times')
      return undefined
    }
    // Queued behind the receipt's handling, which goes on to prepare the session with the asker.
    void socket.receiptMutex
      .mutex(() => this.resend(socket, remoteJid, id!, content, asker, count))
      .catch(err => this.logger.warn({ err, id, asker }, 'could not send an interactive message again on a retry receipt'))
    return undefined
  }

  private async resend(socket: RetrySocket, remoteJid: string, id: string, content: proto.IMessage, asker: string, count: number): Promise<void> {
    // As Baileys: a primary device (no device number) asking gets the message on every device again, another only on itself.
    const toAll = !this.lib.jidDecode(asker)?.device
    const target = toAll ? { useUserDevicesCache: false } : { participant: { jid: asker, count } }
    await socket.relayMessage(remoteJid, content, { messageId: id, additionalNodes: interactiveNodes(), ...target })
  }

  /** As Baileys' willSendMessageAgain and updateSendMessageAgainCount: false past the limit, else counted. */
  private async countResend(key: string): Promise<boolean> {
    const sent = (await this.limit.counts.get<number>(key)) || 0
    if (sent >= this.limit.maxMsgRetryCount) return false
    await this.limit.counts.set(key, sent + 1)
    return true
  }

  /** Every message id a retry receipt names, as Baileys reads them: its own, then the `<item id>` children of its first child (a `<list>`). */
  private sawReceipt(node: BinaryNode): void {
    if (node.attrs.type !== 'retry' || !node.attrs.id) return
    const children = Array.isArray(node.content) ? node.content : []
    const retryCount = Number(children.find(child => child.tag === 'retry')?.attrs.count) || 1
    const items = Array.isArray(children[0]?.content) ? children[0].content.filter(child => child.tag === 'item') : []
    const asker = node.attrs.participant || node.attrs.from
    for (const id of [node.attrs.id, ...items.map(item => item.attrs.id)]) if (id) this.remember(`${id} ${asker}`, retryCount)
  }

  private remember(seen: string, retryCount: number): void {
    const counts = this.pending.get(seen)
    if (counts) {
      if (counts.length >= MAX_PENDING_PER_MESSAGE) counts.shift()
      counts.push(retryCount)
      return
    }
    if (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value!)
    this.pending.set(seen, [retryCount])
  }

  private interactive(content: proto.IMessage): boolean {
    return !!this.lib.normalizeMessageContent(content)?.interactiveMessage
  }
}
