import assert from 'node:assert/strict'
import type { AtomicStorage } from '../ports/storage.ts'
import { sleep } from './storage-harness.ts'
import type { AtomicIt } from './storage-contract-atomic.ts'

/** Contenders per race. */
const N = 50

/**
 * Races between two Storage objects on one backend (two connections): N contenders at once, taking
 * turns between the two, for each atomic step. Exactly one wins where one may, every loser sees
 * false, and no update is lost.
 */
export function atomicRaces(it: AtomicIt): void {
  it(`add(key) raced by ${N} contenders over two connections: exactly one wins, every loser sees false`, async (storage, key, scope) => {
    const results = await race(storage, await scope.second(), (s, i) => s.add(key('claim'), { owner: i }, 60_000))
    const winners = indexesOf(results, true)
    assert.equal(winners.length, 1, `winners: ${winners}`)
    assert.equal(results.filter(r => r === false).length, N - 1)
    assert.deepEqual(await storage.get(key('claim')), { owner: winners[0] })
  })

  it(`add(key) on an expired entry raced by ${N} contenders over two connections: exactly one wins`, async (storage, key, scope) => {
    const other = await scope.second()
    await storage.set(key('claim'), { owner: 'expired' }, 100)
    await sleep(250)
    const results = await race(storage, other, (s, i) => s.add(key('claim'), { owner: i }))
    const winners = indexesOf(results, true)
    assert.equal(winners.length, 1, `winners: ${winners}`)
    assert.deepEqual(await other.get(key('claim')), { owner: winners[0] })
  })

  it(`compareAndSet(key) raced by ${N} contenders expecting one value over two connections: exactly one wins`, async (storage, key, scope) => {
    const other = await scope.second()
    await storage.set(key('state'), { state: 'pending', attempts: [1, 2] })
    const results = await race(storage, other, (s, i) => s.compareAndSet(key('state'), { attempts: [1, 2], state: 'pending' }, { state: 'claimed', by: i }))
    const winners = indexesOf(results, true)
    assert.equal(winners.length, 1, `winners: ${winners}`)
    assert.equal(results.filter(r => r === false).length, N - 1)
    assert.deepEqual(await other.get(key('state')), { state: 'claimed', by: winners[0] })
  })

  it(`compareAndSet(key, undefined, next) raced by ${N} contenders over two connections: exactly one creates the key`, async (storage, key, scope) => {
    const results = await race(storage, await scope.second(), (s, i) => s.compareAndSet(key('new'), undefined, i))
    const winners = indexesOf(results, true)
    assert.equal(winners.length, 1, `winners: ${winners}`)
    assert.equal(await storage.get(key('new')), winners[0])
  })

  it(`deleteIfEqual(key) raced by ${N} contenders over two connections: exactly one removes it`, async (storage, key, scope) => {
    const other = await scope.second()
    await storage.set(key('lease'), { owner: 'me', until: 123 })
    const results = await race(storage, other, s => s.deleteIfEqual(key('lease'), { until: 123, owner: 'me' }))
    assert.equal(indexesOf(results, true).length, 1)
    assert.equal(await other.get(key('lease')), undefined)
  })

  it(`deleteIfEqual(key, v) raced by compareAndSet(key, v, next) over two connections: exactly one of the ${N} wins`, async (storage, key, scope) => {
    const other = await scope.second()
    await storage.set(key('lease'), { owner: 'me', until: 123 })
    const results = await race(storage, other, (s, i) =>
      i % 2 === 0 ? s.deleteIfEqual(key('lease'), { until: 123, owner: 'me' }) : s.compareAndSet(key('lease'), { owner: 'me', until: 123 }, { owner: i }),
    )
    const winners = indexesOf(results, true)
    assert.equal(winners.length, 1, `winners: ${winners} (even: deleteIfEqual, odd: compareAndSet)`)
    assert.deepEqual(await other.get(key('lease')), winners[0] % 2 === 0 ? undefined : { owner: winners[0] }, 'what the winner left')
  })

  it(`increment(key, 1) raced by ${N} contenders over two connections ends at exactly ${N}, each answer distinct`, async (storage, key, scope) => {
    const other = await scope.second()
    const results = await race(storage, other, s => s.increment(key('count'), 1, 60_000))
    assert.deepEqual(
      [...results].sort((a, b) => a - b),
      Array.from({ length: N }, (_, i) => i + 1),
    )
    assert.equal(await other.get(key('count')), N)
  })

  it(`${N} compareAndSet retry loops over two connections each add 1 to one record: it ends at exactly ${N} (no update lost)`, async (storage, key, scope) => {
    const other = await scope.second()
    await storage.set(key('record'), { count: 0, by: [] })
    const tries = await race(storage, other, async (s, i) => {
      for (let attempt = 1; ; attempt++) {
        const current = await s.get<{ count: number; by: number[] }>(key('record'))
        if (await s.compareAndSet(key('record'), current, { count: current!.count + 1, by: [...current!.by, i] })) return attempt
      }
    })
    const record = await storage.get<{ count: number; by: number[] }>(key('record'))
    assert.equal(record!.count, N)
    assert.deepEqual(
      [...record!.by].sort((a, b) => a - b),
      Array.from({ length: N }, (_, i) => i),
    )
    assert.ok(
      tries.some(t => t > 1),
      'the contenders did collide (some retried)',
    )
  })

  it('a lock made of add and deleteIfEqual, raced by 20 holders over two connections, is held by one at a time', async (storage, key, scope) => {
    const other = await scope.second()
    await storage.set(key('unsafe-count'), 0)
    let holders = 0
    let most = 0
    await race(
      storage,
      other,
      async (s, i) => {
        const token = { holder: i }
        while (!(await s.add(key('lock'), token, 30_000))) await sleep(1 + (i % 3))
        most = Math.max(most, ++holders)
        // A read-modify-write with no atomic step: only the lock keeps it from losing counts.
        const count = await s.get<number>(key('unsafe-count'))
        await sleep(1)
        await s.set(key('unsafe-count'), count! + 1)
        holders--
        assert.equal(await s.deleteIfEqual(key('lock'), { holder: -1 }), false, 'a stranger cannot release the lock')
        assert.equal(await s.deleteIfEqual(key('lock'), token), true)
      },
      20,
    )
    assert.equal(most, 1)
    assert.equal(await storage.get(key('unsafe-count')), 20)
    assert.equal(await storage.get(key('lock')), undefined)
  })
}

// --- Internal helpers ---

/** Run `n` contenders at once, alternating between the two storages; their results in contender order. */
async function race<T>(a: AtomicStorage, b: AtomicStorage, contender: (storage: AtomicStorage, i: number) => Promise<T>, n = N): Promise<T[]> {
  // Warm both connections first, so that no contender waits on a connection being opened.
  await Promise.all([a.get('__warm__'), b.get('__warm__')])
  return Promise.all(Array.from({ length: n }, (_, i) => contender(i % 2 === 0 ? a : b, i)))
}

function indexesOf(results: boolean[], value: boolean): number[] {
  return results.flatMap((result, i) => (result === value ? [i] : []))
}
