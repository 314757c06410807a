import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createOutboxStore, newOutboxRecord, type DeadLetter, type OutboxRecord } from '../../../src/domain/webhooks/outbox-store.ts'
import type { Storage } from '../../../src/ports/storage.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'

const test = suite('WebhookOutbox: reading the dead letters')

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** A store holding `count` dead letters, each read back as a fresh object (as Redis or PostgreSQL give them); `alive()` counts those still reachable. */
function storeOfDeadLetters(count: number) {
  const refs: WeakRef<DeadLetter>[] = []
  const alive = () => (gc(), refs.filter(ref => ref.deref() !== undefined).length)
  let aliveAtEnd = -1
  const storage: Storage = {
    ...memoryStorage(),
    async *list<T>(prefix: string): AsyncIterable<[string, T]> {
      if (!prefix.startsWith('webhook-dead:')) return
      for (let n = 0; n < count; n++) {
        const letter: DeadLetter = {
          id: `msg_${n}`,
          deviceId: `d${n % 3}`,
          accountId: 'acc',
          event: 'Texto',
          body: 'x'.repeat(20_000) + n,
          createdAt: n,
          attempts: 1,
          deadAt: n,
          reason: 'max-age',
        }
        refs.push(new WeakRef(letter))
        yield [`webhook-dead:${letter.id}`, letter as T]
      }
      await new Promise(resolve => setImmediate(resolve)) // a WeakRef made in a task keeps its object alive until that task ends
      aliveAtEnd = alive() // every letter has been handed over: how many does the reader still hold?
    },
  }
  return { storage, aliveAtEnd: () => aliveAtEnd }
}

const GONE = { url: 'https://receiver.example/d1' }
const RECORD = { id: 'msg_1', deviceId: 'd1', accountId: 'acc', event: 'Texto', body: '{}' } as const

test('an event another live process claims while it is being dead-lettered (between the two writes) keeps its record and leaves no dead letter', async () => {
  const base = memoryStorage()
  const storage: Storage = {
    ...base,
    async set<T>(key: string, value: T, ttlMs?: number) {
      await base.set(key, value, ttlMs)
      // Another process claims it right then, to deliver it.
      if (key.startsWith('webhook-dead:'))
        await base.set('webhook-outbox:d1:msg_1', { ...(await base.get<object>('webhook-outbox:d1:msg_1')), lease: { owner: 'B' } })
    },
  }
  const store = createOutboxStore(storage, new KeyedLock())
  await store.add(newOutboxRecord(RECORD, Date.now(), 'A'))
  const claimedElsewhere = (record: OutboxRecord) => record.lease?.owner === 'B'
  assert.is(await store.deadLetter('d1:msg_1', 'gone', Date.now(), GONE, claimedElsewhere), undefined)
  assert.equal(await store.deadLetters(), [], 'no dead letter for an event still pending (a redrive would deliver it twice)')
  assert.is(await store.count(), 1, 'its record is left to the process delivering it')
})

test('two dead-letterings of one event at once (two 410s), in one process or two, leave exactly one letter and no record', async () => {
  for (const stores of [1, 2]) {
    const storage = memoryStorage()
    const one = createOutboxStore(storage, new KeyedLock())
    const two = stores === 1 ? one : createOutboxStore(storage, new KeyedLock())
    await one.add(newOutboxRecord(RECORD, Date.now(), 'A'))
    const answers = await Promise.all([one.deadLetter('d1:msg_1', 'gone', 1, GONE), two.deadLetter('d1:msg_1', 'gone', 2, GONE)])
    assert.is(answers.filter(Boolean).length, 1, `${stores} store(s): one of them buried it`)
    assert.equal(
      (await one.deadLetters()).map(letter => [letter.id, letter.reason, letter.url]),
      [['msg_1', 'gone', GONE.url]],
      `${stores} store(s): its letter is kept (the loser took it back as "delivered meanwhile")`,
    )
    assert.is(await one.count(), 0)
  }
})

test('deadLetters({ limit }) holds about `limit` letters while it scans, not every dead letter of 30 days (bodies carry inline media)', async () => {
  const { storage, aliveAtEnd } = storeOfDeadLetters(3_000)
  const store = createOutboxStore(storage, new KeyedLock())
  const letters = await store.deadLetters({ limit: 5 })
  assert.equal(
    letters.map(letter => letter.id),
    ['msg_2999', 'msg_2998', 'msg_2997', 'msg_2996', 'msg_2995'],
    'the newest five',
  )
  assert.ok(aliveAtEnd() <= 200, `${aliveAtEnd()} of 3,000 letters (60 MB of bodies) held at once`)
  assert.equal(
    (await store.deadLetters({ deviceId: 'd1', limit: 2 })).map(letter => letter.id),
    ['msg_2998', 'msg_2995'],
    'of one device',
  )
  assert.is((await store.deadLetters()).length, 3_000, 'without a limit: all')
  assert.equal(await store.deadLetters({ limit: 0 }), [])
})

test.run()
