import { GatewayError } from '../../errors.ts'
import type { GatewayEvents, SendKind } from '../../events.ts'
import type { Logger } from '../../logger.ts'
import { TransportError, type IncomingMessage, type SentMessage, type SessionStatus, type Transport } from '../../ports/transport.ts'
import type { Device } from '../devices.ts'
import type { MessageFeed } from '../message-feed.ts'
import type { Action } from './actions.ts'
import { isGroupAddress } from './addresses.ts'
import type { SendQueues } from './send-queue.ts'

/** Performs actions on the network for a device through its send queue; a sent text is published on the feed as the device's own. */
export class Messenger {
  constructor(
    private readonly transport: Transport,
    private readonly queues: SendQueues,
    private readonly feed: MessageFeed,
    private readonly logger: Logger,
    private readonly events: GatewayEvents,
  ) {}

  /** Do `action` now; resolves with the network's message id (undefined for a read receipt). `publish: false` keeps a sent text off the message feed (OTP codes never reach webhooks); `status`: the session status, when the caller has just read it; `before`: run in the device's queue right before the network call (after the queue's wait), which it prevents by rejecting (a scheduled send checks its claim there). */
  perform(
    device: Device,
    action: Action,
    options: { publish?: boolean; status?: SessionStatus; before?: () => Promise<void> } = {},
  ): Promise<string | undefined> {
    const kind: SendKind = action.kind === 'read' ? 'read' : action.message.kind === 'media' ? action.message.media : action.message.kind
    const before = options.before
    // One promise chained on the queue's, not awaits in async functions: a text send's path costs six promises less.
    if (action.kind === 'read') {
      const markRead = () => this.transport.markRead(device.id, action.target)
      const read = this.call(device, before ? () => before().then(markRead, prevented) : markRead, true)
      return this.reported(device, kind, read)
    }
    const { message, to } = action
    const targeted = message.kind === 'reaction' || message.kind === 'delete'
    const send = () => this.transport.send(device.id, to, message)
    const sent = this.call(device, before ? () => before().then(send, prevented) : send, targeted)
    // A sent text is published on the feed as the device's own before its id is answered.
    if (message.kind !== 'text' || options.publish === false) return this.reported(device, kind, sent)
    return this.reported(device, kind, sent, sent => this.publishSent(device, to, message.text, sent, options.status))
  }

  /** Run another network call of the device (group operations) through its queue. */
  call<T>(device: Device, work: () => Promise<T>, targeted = false): Promise<T> {
    const done = this.queues.run(device.id, work)
    if (!targeted) return done
    return done.catch(err => {
      throw err instanceof TransportError && err.code === 'not-found' ? new GatewayError('message-not-found', { cause: err }) : err
    })
  }

  /** `done`'s id (after `published`, when given), with its `send` event, ok or not; none when `before` prevented the network call (nothing was asked of the network). */
  private reported(
    device: Device,
    kind: SendKind,
    done: Promise<SentMessage | void>,
    published?: (sent: SentMessage) => Promise<void> | void,
  ): Promise<string | undefined> {
    return done.then(
      sent => {
        const publishing = sent && published?.(sent)
        return publishing ? publishing.then(() => this.succeeded(device, kind, sent.id)) : this.succeeded(device, kind, sent ? sent.id : undefined)
      },
      err => {
        if (err instanceof Prevented) throw err.cause
        const reason = err instanceof TransportError || err instanceof GatewayError ? err.code : 'error'
        this.events.emit('send', { deviceId: device.id, kind, ok: false, reason })
        throw err
      },
    )
  }

  private succeeded(device: Device, kind: SendKind, id: string | undefined): string | undefined {
    this.events.emit('send', { deviceId: device.id, kind, ok: true })
    return id
  }

  /** publishText with the session's status: the one the caller read, else the transport's (at once when it knows it); sent all the same, its event not lost for a status unread. */
  private publishSent(device: Device, to: string, text: string, sent: SentMessage, read: SessionStatus | undefined): Promise<void> | void {
    const known = read ?? this.transport.statusNow?.(device.id)
    if (known) return this.publishText(device, to, text, sent, known)
    return this.transport
      .status(device.id)
      .catch(() => undefined)
      .then(status => this.publishText(device, to, text, sent, status))
  }

  /** A sent text on the feed as the device's own (from the phone and LID `status` names, as the transports report what the phone sends; in the chat the send answered); a failure is logged, never the send's. */
  private publishText(device: Device, to: string, text: string, sent: SentMessage, status: SessionStatus | undefined): Promise<void> | void {
    try {
      // In the chat as the network names it (the contact's replies name it so), else as the caller did.
      const chat = sent.chat || to
      const group = isGroupAddress(chat)
      const phone = status?.phone ?? device.phone
      const message: IncomingMessage = { id: sent.id, chat, to: chat, fromMe: true, isGroup: group, timestamp: sent.timestamp, content: { kind: 'text', text } }
      if (phone) message.from = phone
      if (status?.lid) message.fromLid = status.lid
      if (group) message.group = chat
      const published = this.feed.publish(device, message)
      return published && published.catch(err => this.unpublished(err, device, sent))
    } catch (err) {
      this.unpublished(err, device, sent)
    }
  }

  private unpublished(err: unknown, device: Device, sent: SentMessage): void {
    this.logger.error({ err, deviceId: device.id, messageId: sent.id }, 'sent text not published')
  }
}

// --- Internal helpers ---

/** A network call that `before` prevented (its rejection, as `cause`): no network action, so no `send` event; the caller gets the cause. */
class Prevented {
  constructor(readonly cause: unknown) {}
}

const prevented = (cause: unknown): never => {
  throw new Prevented(cause)
}
