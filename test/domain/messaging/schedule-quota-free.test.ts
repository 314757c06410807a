import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { encodeAction, type Action } from '../../../src/domain/messaging/actions.ts'
import { createScheduleStore } from '../../../src/domain/messaging/schedule-store.ts'
import type { Storage } from '../../../src/ports/storage.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'

/**
 * An account's schedule quota (docs/limits.md: `scheduleQuota.maxPending`) counts its pending items;
 * an item's place is freed once, whether it is sent, fails for good or its device is deleted, also
 * when two of those meet (a send on one process, the device's deletion on another).
 */
const test = suite('schedule quota: an item frees its place once')

const text: Action = { kind: 'send', to: '5511988880002', message: { kind: 'text', text: 'oi' } }
const input = (deviceId: string) => ({ accountId: 'a1', deviceId, to: '5511988880002', summary: 'oi', dueAt: Date.now(), agendamento: '2030-01-01 00:00:00' })

/** A store that runs `after.run` once a listing of `after.prefix` has been read to its end. */
function hookedListing(storage: Storage, after: { prefix: string; run?: () => Promise<void> }): Storage {
  return new Proxy(storage, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function') return value
      if (name !== 'list') return value.bind(target)
      return async function* (prefix: string) {
        yield* value.call(target, prefix)
        const run = prefix === after.prefix ? after.run : undefined
        after.run = undefined
        await run?.()
      }
    },
  })
}

test('an item that fails for good while its device is being deleted frees one place, not two', async () => {
  const after: { prefix: string; run?: () => Promise<void> } = { prefix: 'schedule:d1:' }
  const me = soloLiveness()
  const store = createScheduleStore(hookedListing(memoryStorage(), after), new KeyedLock(), { maxPending: 2, maxBytes: Infinity })
  const doomed = await store.add(input('d1'), encodeAction(text))
  await store.add(input('d2'), encodeAction(text)) // the account's other device: still pending
  const claimed = await store.claim(doomed, 60_000, me)
  assert.ok(claimed)
  // The deletion of d1 has listed its items; then the send of the one it listed fails for good.
  after.run = () => store.fail(claimed, 'invalid: refused by the network')
  assert.equal(await store.removeDevice('d1'), 1)
  assert.deepEqual(await store.forDevice('d1'), [])
  // One item pending (on d2) of at most 2: one more fits, the next is refused.
  await store.add(input('d2'), encodeAction(text))
  await assert.rejects(store.add(input('d2'), encodeAction(text)), (err: { code?: string }) => err.code === 'quota-exceeded')
  assert.equal((await store.forDevice('d2')).length, 2)
})

test('an item stored by an older version (never counted in the quota record) does not leave the account room past its quota once freed', async () => {
  const storage = memoryStorage()
  const store = createScheduleStore(storage, new KeyedLock(), { maxPending: 1, maxBytes: Infinity })
  // As an older version left it: a pending item with no place in the account's quota record.
  const legacy = { id: 'legado-1', ...input('d1'), state: 'pending', attempts: 0, createdAt: Date.now(), bytes: 10 }
  await storage.set(`schedule:d1:${legacy.id}`, legacy)
  await storage.set(`schedule-body:${legacy.id}`, encodeAction(text))
  const claimed = await store.claim((await store.forDevice('d1'))[0]!, 60_000, soloLiveness())
  assert.equal(claimed?.id, 'legado-1')
  await store.complete(claimed!)
  // Nothing pending, at most 1: one fits, the next is refused (before, freeing it left a count of -1: room for two).
  await store.add(input('d1'), encodeAction(text))
  await assert.rejects(store.add(input('d1'), encodeAction(text)), (err: { code?: string }) => err.code === 'quota-exceeded')
})

test.run()
