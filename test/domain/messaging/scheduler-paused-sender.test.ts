import { randomBytes } from 'node:crypto'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { storageFromUrl } from '../../../adapters/storage-keyv/index.ts'
import { createScheduleStore } from '../../../src/domain/messaging/schedule-store.ts'
import { encodeAction } from '../../../src/domain/messaging/actions.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import type { Device, Devices } from '../../../src/domain/devices.ts'
import type { Action } from '../../../src/domain/messaging/actions.ts'
import type { Messenger } from '../../../src/domain/messaging/messenger.ts'
import { createScheduler } from '../../../src/domain/messaging/scheduler.ts'
import { silentLogger } from '../../../src/logger.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'
import { needing, POSTGRES, REDIS } from '../../helpers/requires.ts'
import { startLineProcess } from '../../helpers/line-process.ts'

/**
 * Each schedule is sent once (docs/scaling.md, "Guaranteed"), also when the process that claimed it
 * stalls (SIGSTOP, a long GC, a frozen VM) after the claim, while the message waits in the device's
 * send queue: separate node processes (test/helpers/schedule-sender.ts). A waits 3 s in its queue
 * behind a send of its own; it is stopped once its claim is in the store, B judges it gone (its
 * heartbeat stood still for the ttl), takes the item and sends it; then A resumes. Before, A sent it
 * too (the message reached the network twice); now A checks, right before the transport send, that
 * the store still holds its claim, and drops the send.
 */
const test = suite('scheduler: a process paused between its claim and its send')

for (const service of [REDIS, POSTGRES]) {
  const storeTest = needing(test, service, `paused scheduler processes on ${service.name}`)

  storeTest(`on ${service.name}, a scheduled message claimed by a process that stalls before sending it reaches the network once`, async () => {
    const namespace = `zapgate-test-${randomBytes(4).toString('hex')}`
    const storage = await storageFromUrl(service.value!, { namespace })
    const store = createScheduleStore(storage, new KeyedLock())
    const children: Sender[] = []
    const start = (env: Record<string, string>) => (
      children.push(startSender({ STORE_URL: service.value!, STORE_NAMESPACE: namespace, ...env })),
      children.at(-1)!
    )
    try {
      const action = { kind: 'send' as const, to: '5511988880002', message: { kind: 'text' as const, text: 'scheduled' } }
      const input = { accountId: 'a1', deviceId: 'd1', to: action.to, summary: 'scheduled', dueAt: Date.now(), agendamento: '2030-01-01 00:00:00' }
      const item = await store.add(input, encodeAction(action))
      const a = start({ WARM_UP: '1', MIN_INTERVAL_MS: '3000' })
      const aId = (await a.line(line => line.startsWith('instance '))).slice('instance '.length)
      await waitFor(async () => (await store.forDevice('d1'))[0]?.claim?.owner === aId, 10_000, 'A claimed the item')
      a.process.kill('SIGSTOP')
      try {
        const b = start({})
        await b.line(line => line === 'network scheduled')
        await waitFor(async () => (await store.forDevice('d1')).length === 0, 10_000, 'B removed the item it sent')
      } finally {
        a.process.kill('SIGCONT')
      }
      await a.line(line => line.startsWith('performed '))
      const sends = children.flatMap(child => child.lines).filter(line => line === 'network scheduled').length
      assert.is(sends, 1, `the scheduled message reached the network ${sends} times (A: ${a.lines.join(' | ')})`)
      assert.equal(await store.forDevice('d1'), [])
      assert.is(item.state, 'pending')
    } finally {
      for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL')
      for await (const [key] of storage.list('')) await storage.delete(key)
      await storage.close!()
    }
  })
}

test('a send whose instance is fenced (its heartbeat late) right before the network waits, unsent and uncounted, and goes once the fence lifts', async () => {
  const store = createScheduleStore(memoryStorage(), new KeyedLock())
  const device = { id: 'd1', accountId: 'a1', linked: true } as Device
  const devices = { get: async () => device, load: async () => device, status: async () => ({ connected: true, state: 'open' }) } as unknown as Devices
  const accounts = { get: async () => ({}), active: () => true } as never
  let [fenced, checks, sends] = [true, 0, 0]
  const messenger = {
    perform: async (_device: Device, _action: Action, options: { before?: () => Promise<void> } = {}) => (await options.before?.(), sends++, 'm1'),
  } as unknown as Messenger
  const timing = { retryMs: [60_000], pollMs: 100, leaseMs: 120_000, maxWaitMs: 600_000 }
  const fence = {
    get fenceUp() {
      return (checks++, fenced)
    },
    fenceCount: 0,
  }
  const scheduler = createScheduler(store, messenger, { devices, accounts, liveness: soloLiveness(), fence }, timing, silentLogger)
  try {
    scheduler.start()
    await scheduler.schedule(
      device,
      { kind: 'send', to: '5511988880002', message: { kind: 'text', text: 'oi' } },
      { at: Date.now(), text: '2030-01-01 00:00:00' },
    )
    await waitFor(() => checks > 0, 10_000, 'the fence checked')
    await waitFor(async () => (await store.forDevice('d1'))[0]?.claim === undefined, 10_000, 'the claim released')
    assert.is(sends, 0, 'sent while fenced')
    assert.is((await store.forDevice('d1'))[0]?.attempts, 0, 'an attempt counted')
    fenced = false
    await waitFor(async () => (await store.forDevice('d1')).length === 0, 10_000, 'sent once the fence lifted')
    assert.is(sends, 1)
  } finally {
    await scheduler.close()
  }
})

test.run()

// --- Internal helpers ---

type Sender = ReturnType<typeof startSender>

function startSender(env: Record<string, string>) {
  return startLineProcess('test/helpers/schedule-sender.ts', env, 'scheduler process')
}
