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

  /** Do `action` now; resolves with the network's message id (undefined for a read receipt). `publish: false` keeps a sent text off the message feed (OTP codes never reach webhooks); `status`: the session status, when the caller has just read it. */
  async perform(device: Device, action: Action, options: { publish?: boolean; status?: SessionStatus } = {}): Promise<string | undefined> {
    const kind: SendKind = action.kind === 'read' ? 'read' : action.message.kind === 'media' ? action.message.media : action.message.kind
    try {
      let id: string | undefined
      if (action.kind === 'read') {
        await this.call(device, () => this.transport.markRead(device.id, action.target), true)
      } else {
        const { message, to } = action
        const targeted = message.kind === 'reaction' || message.kind === 'delete'
        const sent = await this.call(device, () => this.transport.send(device.id, to, message), targeted)
        if (message.kind === 'text' && options.publish !== false) await this.publishText(device, to, message.text, sent, options.status)
        id = sent.id
      }
      this.events.emit('send', { deviceId: device.id, kind, ok: true })
      return id
    } catch (err) {
      const reason = err instanceof TransportError || err instanceof GatewayError ? err.code : 'error'
      this.events.emit('send', { deviceId: device.id, kind, ok: false, reason })
      throw err
    }
  }

  /** Run another network call of the device (group operations) through its queue. */
  call<T>(device: Device, work: () => Promise<T>, targeted = false): Promise<T> {
    const done = this.queues.run(device.id, work)
    if (!targeted) return done
    return done.catch(err => {
      throw err instanceof TransportError && err.code === 'not-found' ? new GatewayError('message-not-found', { cause: err }) : err
    })
  }

  private async publishText(device: Device, to: string, text: string, sent: SentMessage, known?: SessionStatus): Promise<void> {
    try {
      const status = known ?? (await this.transport.status(device.id).catch(() => undefined)) // sent all the same: its event is not lost for a status unread
      const group = isGroupAddress(to)
      const phone = status?.phone ?? device.phone
      const message: IncomingMessage = { id: sent.id, chat: to, to, fromMe: true, isGroup: group, timestamp: sent.timestamp, content: { kind: 'text', text } }
      if (phone) message.from = phone
      if (group) message.group = to
      await this.feed.publish(device, message)
    } catch (err) {
      this.logger.error({ err, deviceId: device.id, messageId: sent.id }, 'sent text not published')
    }
  }
}
