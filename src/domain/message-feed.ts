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
  return {
    /** Add a subscriber; earlier subscribers run first. */
    subscribe: (subscriber: MessageSubscriber): void => void subscribers.push(subscriber),
    /** Hand a message to every subscriber, then emit the host-facing `message` event. */
    async publish(device: Device, message: IncomingMessage): Promise<void> {
      for (const subscriber of subscribers) {
        try {
          const work = subscriber(device, message)
          if (work) await work
        } catch (err) {
          logger.error({ err, deviceId: device.id, messageId: message.id }, 'message subscriber failed')
        }
      }
      events.emit('message', { deviceId: device.id, accountId: device.accountId, message })
    },
  }
}
