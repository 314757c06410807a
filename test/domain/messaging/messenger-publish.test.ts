import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { GatewayEvents } from '../../../src/events.ts'
import { silentLogger } from '../../../src/logger.ts'
import { Messenger } from '../../../src/domain/messaging/messenger.ts'
import { SendQueues } from '../../../src/domain/messaging/send-queue.ts'
import { messageFeed } from '../../../src/domain/message-feed.ts'
import { TransportError, type IncomingMessage, type Transport } from '../../../src/ports/transport.ts'
import type { Device } from '../../../src/domain/devices.ts'

const test = suite('Messenger: a sent text reaches the message feed (webhooks) as the device own')

test('a text the network took is published though the session status cannot be read (a scheduled send or an agent reply): from the device record', async () => {
  const transport = {
    send: async () => ({ id: 'M1', timestamp: 1_700_000_000 }),
    status: async () => {
      throw new TransportError('timeout', 'transport status did not answer')
    },
  } as unknown as Transport
  const events = new GatewayEvents()
  const feed = messageFeed(events, silentLogger)
  const published: IncomingMessage[] = []
  feed.subscribe((_, message) => void published.push(message))
  const queues = new SendQueues({ sendTimeoutMs: 5_000, minIntervalMs: 0, intervalJitterMs: 0, sendQueueLimit: 10 })
  const messenger = new Messenger(transport, queues, feed, silentLogger, events)
  const device = { id: 'dev-1', accountId: 'acc-1', phone: '5511900000001' } as Device
  const id = await messenger.perform(device, { kind: 'send', to: '5511988887777', message: { kind: 'text', text: 'Olá' } })
  assert.is(id, 'M1')
  assert.is(published.length, 1, 'the sent text is on the feed (its webhook event recorded)')
  assert.equal(published[0]!.from, '5511900000001')
  assert.equal(published[0]!.fromMe, true)
  assert.equal(published[0]!.content, { kind: 'text', text: 'Olá' })
  await queues.close()
})

test.run()
