import type { IncomingMessage } from '../ports/transport.ts'
import type { GatewayEvents } from '../events.ts'
import type { Logger } from '../logger.ts'
import type { Device } from './devices.ts'

/** Something that reacts to every message a device sees (webhook outbox, agents): a promise when it has work to wait for. */
type MessageSubscriber = (device: Device, message: IncomingMessage) => Promise<void> | void

/** The one stream of messages seen by devices (see messageFeed). */
export type MessageFeed = ReturnType<typeof messageFeed>

/** The one stream of messages seen by devices, received and sent (`fromMe`): subscribers run in order, awaited; one failing is logged and does not stop the others. */
export function messageFeed(events: GatewayEvents, logger: Logger) {
  const subscribers: MessageSubscriber[] = []
  const failed = (err: unknown, device: Device, message: IncomingMessage) =>
    logger.error({ err, deviceId: device.id, messageId: message.id }, 'message subscriber failed')
  /** Subscribers from `index` on, in order: each one's promise awaited before the next runs. */
  const publishFrom = (index: number, device: Device, message: IncomingMessage): Promise<void> | void => {
    for (let i = index; i < subscribers.length; i++) {
      let work: Promise<void> | void = undefined
      try {
        work = subscribers[i]!(device, message)
      } catch (err) {
        failed(err, device, message)
      }
      if (work)
        return work.then(
          () => publishFrom(i + 1, device, message),
          err => (failed(err, device, message), publishFrom(i + 1, device, message)),
        )
    }
    events.emit('message', { deviceId: device.id, accountId: device.accountId, message })
  }
  return {
    /** Add a subscriber; earlier subscribers run first. */
    subscribe: (subscriber: MessageSubscriber): void => void subscribers.push(subscriber),
    /** Hand a message to every subscriber, then emit the host-facing `message` event; a promise only while a subscriber has work to wait for. */
    publish(device: Device, message: IncomingMessage): Promise<void> | void {
      return publishFrom(0, device, message)
    },
  }
}
