import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createOutboxStore, newOutboxRecord, type DeadLetter } from '../../../src/domain/webhooks/outbox-store.ts'
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

test('an event delivered while it is being dead-lettered (its record removed between the two writes) leaves no dead letter behind', async () => {
  const base = memoryStorage()
  const storage: Storage = {
    ...base,
    async set<T>(key: string, value: T, ttlMs?: number) {
      await base.set(key, value, ttlMs)
      if (key.startsWith('webhook-dead:')) await base.delete('webhook-outbox:d1:msg_1') // another process's 200 completes it right then
    },
  }
  const store = createOutboxStore(storage, new KeyedLock())
  await store.add(newOutboxRecord({ id: 'msg_1', deviceId: 'd1', accountId: 'acc', event: 'Texto', body: '{}' }, Date.now(), 'A'))
  assert.is(await store.deadLetter('d1:msg_1', 'gone', Date.now(), { url: 'https://receiver.example/d1' }), undefined)
  assert.equal(await store.deadLetters(), [], 'no dead letter for a delivered event (a redrive would deliver it again)')
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
