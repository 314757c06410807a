import assert from 'node:assert/strict'
import { suite } from 'uvu'
import type { Device, Devices } from '../../../src/domain/devices.ts'
import { encodeAction } from '../../../src/domain/messaging/actions.ts'
import type { Messenger } from '../../../src/domain/messaging/messenger.ts'
import { createScheduleStore, type ScheduleItem, type ScheduleStore } from '../../../src/domain/messaging/schedule-store.ts'
import { createScheduler } from '../../../src/domain/messaging/scheduler.ts'
import { silentLogger } from '../../../src/logger.ts'
import type { Storage } from '../../../src/ports/storage.ts'
import { StorageUnavailableError } from '../../../src/store/guarded-storage.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'

/**
 * An account's schedule quota (docs/limits.md: `scheduleQuota`) counts each pending item once,
 * whatever step of taking or freeing its place the store fails or the process dies at (SIGKILL):
 * another process on the store finishes what was cut short, and the account can schedule exactly
 * its quota again, never one message fewer (a place lost) nor one more (a place freed twice).
 */
const test = suite('schedule quota: a failure at any step loses no place and frees none twice')

const action = encodeAction({ kind: 'send', to: '5511988880002', message: { kind: 'text', text: 'oi' } })
const QUOTA = { maxPending: 2, maxBytes: 2 * Buffer.byteLength(JSON.stringify(action)) }
const input = (deviceId: string) => ({
  accountId: 'a1',
  deviceId,
  to: '5511988880002',
  summary: 'oi',
  dueAt: Date.now() + 3_600_000,
  agendamento: '2030-01-01 00:00:00',
})
const [A, B] = [soloLiveness('A'), soloLiveness('B')] // B takes A for gone (as after A's SIGKILL)

type Fault = { at: number; dies: boolean; armed: boolean; writes: number }
const WRITES = new Set(['set', 'delete', 'add', 'compareAndSet', 'deleteIfEqual', 'increment'])

/** The store as process A reaches it: once armed, its `at`-th write fails undone, then (`dies`) every later one too. */
function faulty(storage: Storage, fault: Fault): Storage {
  return new Proxy(storage, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function' || !WRITES.has(String(name))) return typeof value === 'function' ? value.bind(target) : value
      return async (...args: unknown[]) => {
        if (fault.armed && ++fault.writes >= fault.at && (fault.dies || fault.writes === fault.at))
          throw new StorageUnavailableError(String(name), { cause: new Error('unreachable') })
        return value.apply(target, args)
      }
    },
  })
}

/** What process A was doing with its first item (claimed) when the fault hit. */
const OPS: Record<string, (store: ScheduleStore, claimed: ScheduleItem) => Promise<unknown>> = {
  'add a second item': store => store.add(input('d1'), action, A.id),
  'complete a sent item': (store, claimed) => store.complete(claimed),
  'fail an item for good': (store, claimed) => store.fail(claimed, 'invalid: refused by the network'),
  'delete its device': store => store.removeDevice('d1', A.id),
}

/** Process B's scheduler runs until no item is left half done (nothing is due: it sends nothing). */
async function recoverOn(storage: Storage): Promise<ScheduleStore> {
  const store = createScheduleStore(storage, new KeyedLock(), QUOTA)
  const devices = { get: async (id: string) => ({ id, accountId: 'a1' }) as Device, status: async () => ({ connected: true }) } as unknown as Devices
  const messenger = { perform: async () => assert.fail('nothing is due') } as unknown as Messenger
  const timing = { retryMs: [], pollMs: 50, leaseMs: 60_000, maxWaitMs: 60_000 }
  const scheduler = createScheduler(
    store,
    messenger,
    { devices, accounts: { get: async () => ({}), active: () => true } as never, liveness: B },
    timing,
    silentLogger,
  )
  scheduler.start()
  const halfDone = async () => {
    for await (const [, item] of store.all()) if ((item as { quota?: string }).quota) return true
    return false
  }
  await waitFor(async () => !(await halfDone()), 5_000, 'the half-done item finished by process B')
  await scheduler.close()
  return store
}

/** How many more items the account may schedule, at most 3 (adds until one is refused). */
async function room(store: ScheduleStore): Promise<number> {
  for (let added = 0; added < 3; added++) {
    const refused = await store.add(input('d2'), action, B.id).then(
      () => false,
      (err: { code?: string }) => (assert.equal(err.code, 'quota-exceeded'), true),
    )
    if (refused) return added
  }
  return 3
}

for (const [name, op] of Object.entries(OPS)) {
  test(`${name}: the store fails (once, or for good as the process dies) at each write in turn`, async () => {
    for (const dies of [false, true]) {
      for (let at = 1; ; at++) {
        const storage = memoryStorage()
        const fault: Fault = { at, dies, armed: false, writes: 0 }
        const a = createScheduleStore(faulty(storage, fault), new KeyedLock(), QUOTA)
        const first = await a.add(input('d1'), action, A.id)
        if (!name.startsWith('add')) await a.add(input('d2'), action, A.id) // the account's quota full
        const claimed = (await a.claim(first, 60_000, A))!
        fault.armed = true
        await op(a, claimed).catch(() => undefined)
        if (fault.writes < at) break // done before its `at`-th write: every step was tried
        const b = await recoverOn(storage)
        let pending = 0
        for await (const [, item] of b.all()) if (item.state === 'pending') pending++
        const how = `${dies ? 'dies' : 'fails once'} at write ${at}`
        assert.equal(pending + (await room(b)), QUOTA.maxPending, `${name}, ${how}: ${pending} pending, the account may hold ${QUOTA.maxPending}`)
      }
    }
  })
}

test.run()
