import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createOutboxStore, outboxKey } from '../../../src/domain/webhooks/outbox-store.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { pausingStore } from '../../helpers/pausing-storage.ts'
import { lateRecord } from '../../helpers/outbox.ts'

const test = suite('Outbox: a redrive racing a dead-lettering of the same event (two processes, one store)')

/** Where the event is now: pending, dead, both or nowhere. */
async function whereIs(storage: { get(key: string): Promise<unknown> }, key: string, id: string) {
  return { pending: (await storage.get(`webhook-outbox:${key}`)) !== undefined, dead: (await storage.get(`webhook-dead:${id}`)) !== undefined }
}

test('a redrive while another process is moving the pending event to the dead letters: the event stays somewhere', async () => {
  const store = pausingStore()
  // Two processes: each its own in-process lock, one shared store.
  const [a, b] = [createOutboxStore(store.storage, new KeyedLock()), createOutboxStore(store.storage, new KeyedLock())]
  const record = lateRecord('lost-in-the-race', 'instance-a')
  const key = outboxKey(record.deviceId, record.id)
  assert.ok(await a.add(record))
  // A buries it (a 410): its letter is written, the removal of the record is on its way (held here).
  const removal = store.pause('deleteIfEqual' as 'delete', 'webhook-outbox:')
  const burying = a.deadLetter(key, 'gone', Date.now(), { url: 'https://receiver.example/hook', lastStatus: 410, attempted: true })
  await removal.reached
  // Meanwhile the host redrives it through B: the letter is there, the record is still pending.
  const redriven = await b.redrive(record.id, Date.now(), 'instance-b')
  assert.ok(redriven, 'the redrive found the letter')
  removal.release()
  await burying
  const where = await whereIs(store.storage, key, record.id)
  assert.ok(where.pending || where.dead, `the event is neither pending nor a dead letter: lost (${JSON.stringify(where)})`)
})

test('a redrive that answers true while a dead-lettering of the event is under way: the event ends pending, its letter gone', async () => {
  const store = pausingStore()
  const [a, b] = [createOutboxStore(store.storage, new KeyedLock()), createOutboxStore(store.storage, new KeyedLock())]
  const record = lateRecord('redriven-in-the-race', 'instance-a')
  const key = outboxKey(record.deviceId, record.id)
  assert.ok(await a.add(record))
  // A buries it: its letter is written, the removal of the record is held.
  const removal = store.pause('deleteIfEqual' as 'delete', 'webhook-outbox:')
  const burying = a.deadLetter(key, 'max-age', Date.now())
  await removal.reached
  // The host redrives the letter through B, which answers that the event is back in the outbox.
  assert.ok(await b.redrive(record.id, Date.now(), 'instance-b'), 'the redrive found the letter')
  removal.release()
  await burying
  assert.equal(await whereIs(store.storage, key, record.id), { pending: true, dead: false }, 'redriven (true), yet not put back')
})

test('a redriven event buried again before the redrive removed its old letter: the new letter stays', async () => {
  const store = pausingStore()
  const a = createOutboxStore(store.storage, new KeyedLock())
  const record = lateRecord('buried-twice', 'instance-a')
  const key = outboxKey(record.deviceId, record.id)
  assert.ok(await a.add(record))
  assert.ok(await a.deadLetter(key, 'max-age', Date.now()))
  // B redrives it: the record is put back, and B's next write (the removal of the old letter) waits.
  const { storage } = store
  let release!: () => void
  const held = new Promise<void>(resolve => (release = resolve))
  let putBack!: () => void
  const recordPutBack = new Promise<void>(resolve => (putBack = resolve))
  const slowB = createOutboxStore(
    {
      ...storage,
      add: async (k, v, ttl) => {
        const added = await storage.add(k, v, ttl)
        if (k.startsWith('webhook-outbox:')) putBack()
        return added
      },
      delete: async k => (k.startsWith('webhook-dead:') && (await held), storage.delete(k)),
      deleteIfEqual: async (k, e) => (k.startsWith('webhook-dead:') && (await held), storage.deleteIfEqual(k, e)),
    },
    new KeyedLock(),
  )
  const redriving = slowB.redrive(record.id, Date.now(), 'instance-b')
  await recordPutBack
  const letterRemoval = { release: () => release() }
  // The redriven record is attempted at once and its receiver answers 410: A buries it again (a new letter).
  assert.ok(await a.deadLetter(key, 'gone', Date.now() + 1, { url: 'https://receiver.example/hook', lastStatus: 410, attempted: true }))
  letterRemoval.release()
  await redriving
  const where = await whereIs(store.storage, key, record.id)
  assert.ok(where.pending || where.dead, `the event is neither pending nor a dead letter: lost (${JSON.stringify(where)})`)
})

test.run()
