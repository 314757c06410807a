import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { InstanceView, type InstanceRecord } from '../../src/domain/instance-view.ts'
import { createOutboxStore, newOutboxRecord, outboxKey } from '../../src/domain/webhooks/outbox-store.ts'
import { silentLogger } from '../../src/logger.ts'
import type { Storage } from '../../src/ports/storage.ts'
import { Collection } from '../../src/store/collection.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'

/**
 * An instance is gone only when its record is: an observer that finds another's heartbeat counter
 * still for the time-to-live removes its record, and when that removal fails because the heartbeat
 * landed between the read and the removal, the instance is alive (docs/scaling.md, "Which process
 * is alive"). Before, it was told as departed all the same, and for up to a heartbeat its webhook
 * events were adopted (and its schedules claimed) while it went on delivering them itself.
 */
const test = suite('instances: a heartbeat landing as its record is removed')

const settings = { ttlMs: 200, heartbeatMs: 50 }
const OTHER = 'other-host-4242-abc123-def456'

/** `storage` on which `other`'s next heartbeat (its counter moved) lands just before the first removal of its record. */
function heartbeatBeforeRemoval(storage: Storage, other: InstanceRecord) {
  const seen = { removals: 0 }
  const wrapped = new Proxy(storage, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (name !== 'deleteIfEqual' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value
      return async (key: string, expected: unknown) => {
        if (key === `instance:${other.id}` && seen.removals++ === 0) await target.set(key, { ...other, beat: other.beat! + 1 })
        return value.call(target, key, expected)
      }
    },
  })
  return { storage: wrapped, seen }
}

test('the removal of a silent record fails as its heartbeat lands: the instance stays alive and its webhook events stay its own', async () => {
  const shared = memoryStorage()
  const lock = new KeyedLock()
  const other: InstanceRecord = { id: OTHER, host: 'other-host', pid: 4242, startedAt: 1, heartbeatAt: 1, beat: 7, url: 'http://other:3000' }
  await new Collection<InstanceRecord>(shared, lock, 'instance').put(OTHER, other)
  const outbox = createOutboxStore(shared, lock)
  const event = newOutboxRecord({ id: 'evt_1', deviceId: 'd1', accountId: 'a1', event: 'Texto', body: '{}' }, Date.now(), OTHER)
  await outbox.add(event)

  const { storage, seen } = heartbeatBeforeRemoval(shared, other)
  const mine: InstanceRecord = { id: 'this-host-1-abc-def', host: 'this-host', pid: 1, startedAt: 1, heartbeatAt: 1, beat: 0 }
  const view = new InstanceView(
    mine.id,
    new Collection<InstanceRecord>(storage, new KeyedLock(), 'instance'),
    settings.ttlMs,
    settings.heartbeatMs,
    silentLogger,
  )
  const departures: string[][] = []
  view.onDeparture(gone => departures.push(gone))

  // Reads a heartbeat apart, until one finds its counter still for the time-to-live and tries to remove it.
  for (let reads = 0; seen.removals === 0; reads++) {
    assert.ok(reads < 200, 'the silent record was never removed')
    await view.refresh(mine)
    if (seen.removals === 0) await new Promise(resolve => setTimeout(resolve, 20))
  }
  assert.ok(view.isAlive(OTHER), 'alive: its heartbeat reached the store')
  assert.equal(departures, [], 'not told as departed')
  assert.is(await outbox.adopt(outboxKey('d1', 'evt_1'), view), undefined, 'its event is not adopted')
  assert.is((await outbox.get(outboxKey('d1', 'evt_1')))?.owner, OTHER, 'its event is still its own to deliver')
})

test.run()
