import assert from 'node:assert/strict'
import { suite } from 'uvu'
import type { AtomicStorage, Storage } from '../../src/ports/storage.ts'
import { jsonEqual } from '../../src/store/json-equal.ts'
import { storageContract } from '../../src/testing/storage-contract.ts'
import { contractCases, failingCases } from '../helpers/contract-cases.ts'
import { memoryStorage, type MemoryStorage } from '../helpers/memory-storage.ts'

/** What a broken adapter changes: the steps it does its own way, given the right storage and its entries (shared by both connections). */
type Breakage = (right: MemoryStorage, entries: Entries) => Partial<AtomicStorage>
type Entries = Map<string, { value: unknown; expires?: number }>

/** A storage that is the test Map storage but for the steps `breakage` replaces (its second connection is broken alike). */
function broken(breakage: Breakage, entries: Entries = new Map()): MemoryStorage {
  const right = memoryStorage(entries)
  const { get, set, delete: remove, list, add, compareAndSet, deleteIfEqual, increment } = right
  return Object.assign(
    { get, set, delete: remove, list, add, compareAndSet, deleteIfEqual, increment, size: 0, connectAgain: () => broken(breakage, entries) },
    breakage(right, entries),
  )
}

/** The cases of the storage contract named with `part`, each run against `breakage`: the names of those it fails. */
function failedBy(breakage: Breakage, part: string): Promise<string[]> {
  const register = (test: Parameters<typeof storageContract>[0]) =>
    storageContract(test, async (): Promise<Storage> => broken(breakage), { connectAgain: async first => (first as MemoryStorage).connectAgain(), ping: false })
  return failingCases(contractCases(register, part))
}

/** Assert that of the contract's cases named with `part`, `breakage` fails at least one. */
async function assertCaught(breakage: Breakage, part: string): Promise<void> {
  assert.notDeepEqual(await failedBy(breakage, part), [], `the contract's cases named with ${JSON.stringify(part)} all passed the broken storage`)
}

/** The live entry under `key` of the Map (an expired one counts as none), read in the same step as the write that follows. */
function liveEntry(entries: Entries, key: string) {
  const entry = entries.get(key)
  return entry && (entry.expires === undefined || entry.expires > Date.now()) ? entry : undefined
}
const entryOf = (value: unknown, ttlMs?: number) => ({ value, ...(ttlMs ? { expires: Date.now() + ttlMs } : {}) })

const bites = suite('zapgate/testing: the storage contract fails a broken storage')

bites('the test Map storage itself passes the cases these tests run', async () => {
  for (const part of ['copy', 'null', 'deleteIfEqual']) assert.deepEqual(await failedBy(() => ({}), part), [], part)
})

bites('add and compareAndSet that keep the caller’s object (mutating it afterwards changes the stored value)', async () => {
  const byReference: Breakage = (_, entries) => ({
    async add(key, value, ttlMs) {
      if (liveEntry(entries, key)) return false
      entries.set(key, entryOf(value, ttlMs))
      return true
    },
    async compareAndSet(key, expected, next, ttlMs) {
      const entry = liveEntry(entries, key)
      if (expected === undefined ? entry !== undefined : entry === undefined || !jsonEqual(entry.value, expected)) return false
      entries.set(key, entryOf(next, ttlMs))
      return true
    },
  })
  await assertCaught(byReference, 'copy')
})

bites('a list that yields the stored objects themselves (mutating a listed value changes the stored one)', async () => {
  const byReference: Breakage = (_, entries) => ({
    async *list<T>(prefix: string): AsyncIterable<[string, T]> {
      for (const [key] of entries) if (key.startsWith(prefix) && liveEntry(entries, key)) yield [key, liveEntry(entries, key)!.value as T]
    },
  })
  await assertCaught(byReference, 'copy')
})

bites('steps that take a stored null for an absent key (add, compareAndSet(key, undefined), delete, deleteIfEqual, list)', async () => {
  const nullIsAbsent: Record<string, Breakage> = {
    add: (_, entries) => ({
      async add(key, value, ttlMs) {
        if (liveEntry(entries, key)?.value != null) return false
        entries.set(key, entryOf(structuredClone(value), ttlMs))
        return true
      },
    }),
    compareAndSet: (right, entries) => ({
      async compareAndSet(key, expected, next, ttlMs) {
        if (expected !== undefined || next === undefined || liveEntry(entries, key)?.value != null) return right.compareAndSet(key, expected, next, ttlMs)
        entries.set(key, entryOf(structuredClone(next), ttlMs))
        return true
      },
    }),
    delete: right => ({ delete: async key => (await right.get(key)) != null && right.delete(key) }),
    deleteIfEqual: right => ({ deleteIfEqual: async (key, expected) => (await right.get(key)) != null && right.deleteIfEqual(key, expected) }),
    list: right => ({
      async *list<T>(prefix: string): AsyncIterable<[string, T]> {
        for await (const [key, value] of right.list<T>(prefix)) if (value != null) yield [key, value]
      },
    }),
  }
  const passed: string[] = []
  for (const [step, breakage] of Object.entries(nullIsAbsent)) if ((await failedBy(breakage, 'null')).length === 0) passed.push(step)
  assert.deepEqual(passed, [], 'the broken steps that passed the contract')
})

bites('a deleteIfEqual that reads, compares, then deletes (another writer can change the value between)', async () => {
  const readThenDelete: Breakage = right => ({
    async deleteIfEqual(key, expected) {
      const current = await right.get(key)
      return current !== undefined && jsonEqual(current, expected) && right.delete(key)
    },
  })
  await assertCaught(readThenDelete, 'deleteIfEqual')
})

bites('an increment that writes a sum past a safe integer, then rejects (the counter is stuck)', async () => {
  const writesThenRejects: Breakage = (_, entries) => ({
    async increment(key, by, ttlMs) {
      const entry = liveEntry(entries, key)
      if (!entry) return (entries.set(key, entryOf(by, ttlMs)), by)
      if (!Number.isSafeInteger(entry.value)) throw new TypeError('not an integer')
      entry.value = (entry.value as number) + by
      if (!Number.isSafeInteger(entry.value)) throw new RangeError('not a safe integer')
      return entry.value as number
    },
  })
  await assertCaught(writesThenRejects, 'the sum would not be a safe integer')
})

bites.run()
