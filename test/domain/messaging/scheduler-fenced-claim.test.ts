import { randomBytes } from 'node:crypto'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { storageFromUrl } from '../../../adapters/storage-keyv/index.ts'
import type { Device, Devices } from '../../../src/domain/devices.ts'
import type { Liveness } from '../../../src/domain/instances.ts'
import { encodeAction, type Action } from '../../../src/domain/messaging/actions.ts'
import type { Messenger } from '../../../src/domain/messaging/messenger.ts'
import { createScheduleStore } from '../../../src/domain/messaging/schedule-store.ts'
import { createScheduler } from '../../../src/domain/messaging/scheduler.ts'
import { silentLogger } from '../../../src/logger.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { instanceIdOf, processGroup, whilePaused } from '../../helpers/line-process.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { needing, POSTGRES, REDIS } from '../../helpers/requires.ts'

/**
 * A scheduled message reaches the network once (docs/scaling.md, "Where a duplicate can happen"), also
 * when the process that claimed it was fenced at its claim (back from a pause, its heartbeat not yet
 * in the store) or since (paused while the message waited in the device's queue), and the fence lifted
 * before its check right before the send: another process that read its instance record while it was
 * still gone may take the claim over after that check, and send the message too. The send begins only
 * if the claim was made unfenced and no fence was raised since (as a webhook POST's).
 */
const test = suite('scheduler: a claim made while fenced, or fenced since')

const device = { id: 'd1', accountId: 'a1', linked: true } as Device
const devices = { get: async () => device, load: async () => device, status: async () => ({ connected: true, state: 'open' }) } as unknown as Devices
const accounts = { get: async () => ({}), active: () => true } as never
const timing = { retryMs: [60_000], pollMs: 100, leaseMs: 120_000, maxWaitMs: 600_000 }
const action: Action = { kind: 'send', to: '5511988880002', message: { kind: 'text', text: 'oi' } }

for (const [when, fencedAtClaim] of [
  ['at its claim (its heartbeat not yet in the store)', true],
  ['since its claim (a pause while it waited in the queue)', false],
] as const)
  test(`a message claimed by a process fenced ${when} is sent once when another took its record for gone just before it registered again`, async () => {
    const storage = memoryStorage()
    const [storeOfA, storeOfB] = [createScheduleStore(storage, new KeyedLock()), createScheduleStore(storage, new KeyedLock())]
    const fence = { fenceUp: fencedAtClaim, fenceCount: 1 }
    const sent: string[] = []
    let [queued, checked, moveOn, answer] = [false, false, () => {}, () => {}]
    const [queue, answered] = [new Promise<void>(resolve => (moveOn = resolve)), new Promise<void>(resolve => (answer = resolve))]
    // A's send waits in the device's queue (behind another send) until the test moves it on; `before` is its check right before the
    // network; the network's answer to it comes when the test says (its outcome is recorded after that).
    const messengerOfA = {
      perform: async (_device: Device, _action: Action, { before }: { before: () => Promise<void> }) => {
        queued = true
        await queue
        try {
          await before()
        } finally {
          checked = true
        }
        sent.push('A')
        return (await answered, 'mA')
      },
    } as unknown as Messenger
    const messengerOfB = {
      perform: async (_device: Device, _action: Action, { before }: { before: () => Promise<void> }) => (await before(), sent.push('B'), 'mB'),
    } as unknown as Messenger
    // B's last registry read took A for gone; its read of A's record (absent: A not yet registered again) is answered, its compare-and-set waits.
    let [confirming, confirm] = [false, (_gone: boolean) => {}]
    const confirmed = new Promise<boolean>(resolve => (confirm = resolve))
    const livenessOfB: Liveness = { id: 'B', isAlive: id => id !== 'A', onDeparture() {}, confirmGone: async () => ((confirming = true), confirmed) }
    const livenessOfA: Liveness = { id: 'A', isAlive: () => true, onDeparture() {} }
    const a = createScheduler(storeOfA, messengerOfA, { devices, accounts, liveness: livenessOfA, fence }, timing, silentLogger)
    const b = createScheduler(storeOfB, messengerOfB, { devices, accounts, liveness: livenessOfB }, timing, silentLogger)
    try {
      a.start()
      await a.schedule(device, action, { at: Date.now(), text: '2030-01-01 00:00:00' })
      await waitFor(() => queued, 5_000, "A claimed the item, its send in the device's queue")
      if (!fencedAtClaim) Object.assign(fence, { fenceUp: true, fenceCount: 2 }) // paused past two thirds of the ttl
      b.start()
      await waitFor(() => confirming, 5_000, "B read A's record to take its claim over")
      fence.fenceUp = false // A's heartbeat registered it again: its fence lifts (its count unchanged)
      moveOn()
      // A's check ended: sent, or refused and its claim released.
      await waitFor(async () => checked && (sent.includes('A') || (await storeOfA.forDevice('d1'))[0]?.claim === undefined), 5_000, "A's check")
      confirm(true)
      await waitFor(async () => (await storeOfA.forDevice('d1'))[0]?.claim?.owner !== 'A', 5_000, "B's claim decided")
      answer()
      await waitFor(async () => (await storeOfA.forDevice('d1')).length === 0, 5_000, 'the item removed once sent')
      assert.equal(sent.length, 1, `the message reached the network ${sent.length} times: ${sent.join(', ')}`)
    } finally {
      await a.close()
      await b.close()
    }
  })

for (const service of [REDIS, POSTGRES]) {
  const storeTest = needing(test, service, `fenced scheduler processes on ${service.name}`)

  for (const cluster of [true, false])
    storeTest(
      `on ${service.name}${cluster ? '' : " outside cluster mode (a process started once the first one's heartbeat lapsed)"}, a message whose process paused while it waited in the queue, and registered again before its check, is not sent by it and its taker both`,
      async () => {
        const namespace = `zapgate-test-${randomBytes(4).toString('hex')}`
        const storage = await storageFromUrl(service.value!, { namespace })
        const store = createScheduleStore(storage, new KeyedLock())
        const children = processGroup(
          'test/helpers/schedule-sender.ts',
          { STORE_URL: service.value!, STORE_NAMESPACE: namespace, CLUSTER: cluster ? '1' : '0' },
          'scheduler process',
        )
        try {
          // A's warm-up send holds the device's queue until the test answers it: the scheduled message waits behind it, claimed.
          const a = children.start({ WARM_UP: '1', HOLD: 'warm-up,late' })
          const aId = await instanceIdOf(a)
          await a.line(line => line === 'network warm-up')
          const late = { kind: 'send' as const, to: '5511988880002', message: { kind: 'text' as const, text: 'late' } }
          const input = { accountId: 'a1', deviceId: 'd1', to: late.to, summary: 'late', dueAt: Date.now(), agendamento: '2030-01-01 00:00:00' }
          await store.add(input, encodeAction(late))
          await waitFor(async () => (await store.forDevice('d1'))[0]?.claim?.owner === aId, 10_000, 'A claimed the item')
          // B judges A gone (removes its record), reads that record absent to take the item over; its compare-and-set waits.
          const b = await whilePaused(a, async () => {
            const taker = children.start({ HOLD_TAKEOVER: '1' })
            await taker.line(line => line === 'takeover held', 20_000)
            return taker
          })
          await a.line(line => line === 'rejoined')
          a.process.kill('SIGUSR2') // the warm-up answered: A's scheduled send is checked now
          await a.line(line => line === 'network late' || line.startsWith('performed failed'))
          b.process.kill('SIGUSR2')
          await b.line(line => line === 'network late')
          a.process.kill('SIGUSR2')
          await waitFor(async () => (await store.forDevice('d1')).length === 0, 10_000, 'the item removed once sent')
          const sends = children.started.flatMap(child => child.lines).filter(line => line === 'network late').length
          assert.is(sends, 1, `the scheduled message reached the network ${sends} times (A: ${a.lines.join(' | ')}; B: ${b.lines.join(' | ')})`)
        } finally {
          children.killAll()
          for await (const [key] of storage.list('')) await storage.delete(key)
          await storage.close!()
        }
      },
    )
}

test.run()
