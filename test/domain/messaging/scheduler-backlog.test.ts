import assert from 'node:assert/strict'
import { suite } from 'uvu'
import type { Devices } from '../../../src/domain/devices.ts'
import type { Messenger } from '../../../src/domain/messaging/messenger.ts'
import { createScheduleStore, type ScheduleItem } from '../../../src/domain/messaging/schedule-store.ts'
import { createScheduler } from '../../../src/domain/messaging/scheduler.ts'
import { silentLogger } from '../../../src/logger.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'

/**
 * The scheduler backlog (what the zapgate_scheduled_messages and zapgate_scheduled_messages_due gauges
 * show, read at `now`): an item waiting for a retry is pending, due once its retry time has come (not at
 * its first time, already past), like an item due for its first attempt; a failed one is no backlog.
 */
const test = suite('scheduler: the backlog the metrics show counts items waiting for a retry')

const MINUTE = 60_000

test('an item waiting for a retry is pending but not due until its retry time, then due like a first attempt', async () => {
  const liveness = soloLiveness()
  const store = createScheduleStore(memoryStorage(), new KeyedLock())
  const scheduler = createScheduler(
    store,
    {} as Messenger,
    { devices: {} as Devices, accounts: {} as never, liveness },
    { retryMs: [MINUTE], pollMs: 100, leaseMs: 300, maxWaitMs: MINUTE },
    silentLogger,
  )
  const now = Date.now()
  const add = (to: string, dueAt: number) =>
    store.add({ accountId: 'a1', deviceId: 'd1', to, summary: 'oi', dueAt, agendamento: '2030-01-01 00:00:00' }, { kind: 'send' } as never, liveness.id)
  const failOnce = async (item: ScheduleItem, retryAt?: number) => {
    const claimed = await store.claim(item, 300, liveness)
    assert.ok(claimed, 'claimed')
    await store.fail(claimed, 'boom', retryAt)
  }
  await add('5511900000001', now - MINUTE) // due for its first attempt
  await add('5511900000002', now + 10 * MINUTE) // not yet due
  await failOnce(await add('5511900000003', now - MINUTE), now + MINUTE) // first time past, its retry in a minute
  await failOnce(await add('5511900000004', now - MINUTE)) // failed for good
  try {
    assert.deepEqual(await scheduler.backlog(now), { pending: 3, failed: 1, due: 1 }, 'the retry not yet due')
    assert.deepEqual(await scheduler.backlog(now + MINUTE - 1), { pending: 3, failed: 1, due: 1 })
    assert.deepEqual(await scheduler.backlog(now + MINUTE), { pending: 3, failed: 1, due: 2 }, 'the retry due at its time')
  } finally {
    await scheduler.close()
  }
})

test.run()
