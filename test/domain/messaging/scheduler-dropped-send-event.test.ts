import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Device, Devices } from '../../../src/domain/devices.ts'
import { messageFeed } from '../../../src/domain/message-feed.ts'
import type { Action } from '../../../src/domain/messaging/actions.ts'
import { Messenger } from '../../../src/domain/messaging/messenger.ts'
import { createScheduleStore } from '../../../src/domain/messaging/schedule-store.ts'
import { createScheduler } from '../../../src/domain/messaging/scheduler.ts'
import { SendQueues } from '../../../src/domain/messaging/send-queue.ts'
import { GatewayEvents, type GatewayEventMap } from '../../../src/events.ts'
import { silentLogger } from '../../../src/logger.ts'
import type { Transport } from '../../../src/ports/transport.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'

/**
 * The `send` event (and so `zapgate_sends_total` / `zapgate_send_failures_total`) reports network
 * actions. A scheduled send the scheduler drops right before the network (this instance fenced, or its
 * claim taken over) asked the network for nothing: it is no event. Before, it was reported as a failed
 * send with reason `error`.
 */
const test = suite('scheduler: a send dropped before the network is not a send event')

test('a scheduled send put off while this instance is fenced is no send event; the send made once it stands is one, ok', async () => {
  const sent: string[] = []
  const transport = {
    send: async (_: string, to: string) => (sent.push(to), { id: `M${sent.length}`, timestamp: 1 }),
    status: async () => ({ state: 'open', connected: true }),
  } as unknown as Transport
  const events = new GatewayEvents()
  const reported: GatewayEventMap['send'][0][] = []
  events.on('send', event => void reported.push(event))
  const queues = new SendQueues({ sendTimeoutMs: 5_000, minIntervalMs: 0, intervalJitterMs: 0, sendQueueLimit: 10 })
  const messenger = new Messenger(transport, queues, messageFeed(events, silentLogger), silentLogger, events)
  const device = { id: 'd1', accountId: 'a1', linked: true, phone: '5511900000001' } as Device
  const devices = { get: async () => device, load: async () => device, status: async () => ({ connected: true, state: 'open' }) } as unknown as Devices
  const accounts = { get: async () => ({}), active: () => true } as never
  let fenced = true
  let checks = 0
  // Read at each claim and right before the network.
  const fence = {
    get fenceUp() {
      return (checks++, fenced)
    },
    fenceCount: 0,
  }
  const services = { devices, accounts, liveness: soloLiveness(), fence }
  const timing = { retryMs: [50, 50, 50], pollMs: 100, leaseMs: 120_000, maxWaitMs: 600_000 }
  const scheduler = createScheduler(createScheduleStore(memoryStorage(), new KeyedLock()), messenger, services, timing, silentLogger)
  const action: Action = { kind: 'send', to: '5511988880002', message: { kind: 'text', text: 'oi' } }
  try {
    scheduler.start()
    await scheduler.schedule(device, action, { at: Date.now(), text: '2030-01-01 00:00:00' })
    // Read at the claim, checked right before the network, put off, released and claimed again (about 1 s later): the first try has ended.
    await waitFor(() => checks > 2, 10_000, 'the scheduler put the send off and tried again')
    assert.equal(sent, [], 'nothing reached the network')
    assert.equal(reported, [], 'a send put off before the network is no send event (no failure counted)')
    fenced = false
    await waitFor(() => sent.length > 0, 10_000, 'sent once this instance stands again')
    await waitFor(() => reported.length > 0, 5_000, 'its send event')
    assert.equal(reported, [{ deviceId: 'd1', kind: 'text', ok: true }])
  } finally {
    await scheduler.close()
    await queues.close()
  }
})

test('a network call its `before` prevents is no send event: the caller gets the rejection, the network is not asked', async () => {
  const events = new GatewayEvents()
  const reported: GatewayEventMap['send'][0][] = []
  events.on('send', event => void reported.push(event))
  let asked = 0
  const transport = { send: async () => (asked++, { id: 'M1', timestamp: 1 }), markRead: async () => void asked++ } as unknown as Transport
  const queues = new SendQueues({ sendTimeoutMs: 5_000, minIntervalMs: 0, intervalJitterMs: 0, sendQueueLimit: 10 })
  const messenger = new Messenger(transport, queues, messageFeed(events, silentLogger), silentLogger, events)
  const device = { id: 'd1', accountId: 'a1' } as Device
  const dropped = new Error('another process took the item over')
  const before = () => Promise.reject(dropped)
  const send: Action = { kind: 'send', to: '5511988880002', message: { kind: 'reaction', target: { id: 'X', chat: '5511988880002' }, emoji: '👍' } }
  for (const action of [send, { kind: 'read', target: { id: 'X', chat: '5511988880002' } } as Action]) {
    const failure = await messenger.perform(device, action, { before }).then(
      () => undefined,
      (err: unknown) => err,
    )
    assert.is(failure, dropped, `${action.kind}: the caller gets what before rejected with`)
  }
  assert.is(asked, 0, 'the network was not asked')
  assert.equal(reported, [], 'no send event')
  await queues.close()
})

test.run()
