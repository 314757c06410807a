/**
 * One contender process for test/adapters/storage-keyv-processes.test.ts: opens the store given in
 * STORE_URL (namespace STORE_NAMESPACE), prints `ready`, waits for `go` on stdin, then runs
 * CONTENDERS of each race at once and prints one JSON line of what it won. Not a test by itself.
 */
import { createInterface } from 'node:readline'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { requireAtomic } from '../../src/ports/storage.ts'
import { Collection } from '../../src/store/collection.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { UniqueIndex } from '../../src/store/unique-index.ts'

const process_ = Number(process.env.CONTENDER_ID)
const n = Number(process.env.CONTENDERS)
const storage = requireAtomic(await storageFromUrl(process.env.STORE_URL!, { namespace: process.env.STORE_NAMESPACE }), 'contender')
const lock = new KeyedLock()
const counters = new Collection<{ count: number; by: string[] }>(storage, lock, 'counter')
const emails = new UniqueIndex<{ accountId: string }>(storage, lock, 'account-email')
const each = <T>(run: (i: number, id: string) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => run(i, `${process_}.${i}`)))

await storage.get('warm-up')
console.log('ready')
await new Promise<void>(resolve => createInterface({ input: process.stdin }).once('line', () => resolve()))

const [added, counted, swapped, updated, claimed] = await Promise.all([
  each((_, id) => storage.add('claim', { id }, 60_000)),
  each(() => storage.increment('count', 1, 60_000)),
  each(async (_, id) => {
    for (let tries = 1; ; tries++) {
      const current = await storage.get<{ count: number; by: string[] }>('record')
      const next = { count: (current?.count ?? 0) + 1, by: [...(current?.by ?? []), id] }
      if (await storage.compareAndSet('record', current, next)) return tries
    }
  }),
  each((_, id) => counters.update('one', c => ({ count: (c?.count ?? 0) + 1, by: [...(c?.by ?? []), id] }))),
  each((_, id) => emails.claim('ana@example.com', { accountId: id })),
])
console.log(
  JSON.stringify({
    addWins: added.flatMap((won, i) => (won ? [`${process_}.${i}`] : [])),
    addLosses: added.filter(won => won === false).length,
    increments: counted,
    casRetries: swapped.reduce((sum, tries) => sum + tries - 1, 0),
    updates: updated.length,
    claimWins: claimed.flatMap((won, i) => (won ? [`${process_}.${i}`] : [])),
  }),
)
await storage.close!()
