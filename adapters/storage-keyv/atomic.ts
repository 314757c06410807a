import type Keyv from 'keyv'
import { jsonEqual } from 'zapgate/adapter-kit'
import type { Raw, RawStore } from './raw-stores.ts'
import { originalField } from './stored-key.ts'

/** The Storage steps built on a RawStore, on whole Keyv keys (`<namespace>:` and the key; `sweep` on stored names). */
export interface KeyvAtomicSteps {
  get(key: string): Promise<unknown>
  add(key: string, value: unknown, ttlMs?: number): Promise<boolean>
  compareAndSet(key: string, expected: unknown, next: unknown, ttlMs?: number): Promise<boolean>
  deleteIfEqual(key: string, expected: unknown): Promise<boolean>
  increment(key: string, by: number, ttlMs?: number): Promise<number>
  /** Remove the entry; true only when it was live (an expired one is removed too, and answers false, as an absent key). */
  remove(key: string): Promise<boolean>
  /** Remove each of `entries` (raw, as read) that has expired, only while it is still that entry, until `stopped()`; resolves how many it removed. */
  sweep(entries: AsyncIterable<[key: string, stored: Raw]>, stopped: () => boolean): Promise<number>
}

/**
 * The atomic steps over a Keyv's raw entries (ttls already checked: positive integers). Each reads the raw entry, decides in JS (Keyv's own
 * decoding and expiry rule, deep JSON equality), then writes with the backend's atomic step on the
 * exact bytes it read: insert-if-missing, or swap-if-unchanged. When that write fails, another
 * writer got in between; the step reads again (so a loser answers false from what it saw). Entries
 * keep Keyv's format, so Keyv's own get, list and iterator read them.
 *
 * `get` reads the same way: an expired entry is removed only if it is still the expired one (Keyv's
 * own get removes the key unconditionally, which could remove a claim just added in its place).
 */
export function keyvAtomicSteps(keyv: Keyv, raw: RawStore, nameOf: (key: string) => string): KeyvAtomicSteps {
  const compressed = Boolean((keyv.opts as { compression?: unknown }).compression)
  const decode = async (stored: Raw | undefined): Promise<Entry | undefined> => {
    if (stored === undefined || stored === null) return undefined
    const data = typeof stored === 'string' || compressed ? await keyv.deserializeData(stored as string) : stored
    return data === undefined || data === null ? undefined : (data as Entry)
  }
  // An entry whose name was hashed also keeps its whole key (ORIGINAL_KEY), for listings.
  const encode = (key: string, value: unknown, expires: number | undefined): Promise<Raw> =>
    keyv.serializeData({ value, expires, ...originalField(key, nameOf(key)) } as never)

  /** Read, check `matches`, write `next` (or remove, for REMOVE) on the bytes read; again while others get in between. */
  const conditional = async (whole: string, step: string, matches: (live: Entry | undefined) => boolean, next: unknown, ttlMs?: number) => {
    const key = nameOf(whole)
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const stored = await raw.read(key)
      const entry = await decode(stored)
      const live = entry && !expired(entry) ? entry : undefined
      if (!matches(live)) return false
      if (next === REMOVE) {
        if (await raw.swap(key, stored, undefined)) return true
        continue
      }
      const written = await encode(whole, next, expiry(ttlMs))
      if (stored === undefined ? await raw.insert(key, written, ttlMs) : await raw.swap(key, stored, written, ttlMs)) return true
    }
    throw new Error(`${step}: ${MAX_ATTEMPTS} writes in a row lost to other writers`)
  }

  return {
    async get(whole) {
      const key = nameOf(whole)
      const stored = await raw.read(key)
      const entry = await decode(stored)
      if (!entry) return undefined
      if (!expired(entry)) return entry.value
      await raw.swap(key, stored, undefined)
      return undefined
    },
    async add(key, value, ttlMs) {
      if (await raw.insert(nameOf(key), await encode(key, value, expiry(ttlMs)), ttlMs)) return true
      return conditional(key, 'add', live => live === undefined, value, ttlMs)
    },
    async compareAndSet(key, expected, next, ttlMs) {
      if (next === undefined) throw new TypeError('compareAndSet: next must not be undefined (deleteIfEqual removes a key)')
      if (expected === undefined) return this.add(key, next, ttlMs)
      return conditional(key, 'compareAndSet', live => live !== undefined && jsonEqual(live.value, expected), next, ttlMs)
    },
    async deleteIfEqual(key, expected) {
      if (expected === undefined) throw new TypeError('deleteIfEqual: expected must not be undefined')
      return conditional(key, 'deleteIfEqual', live => live !== undefined && jsonEqual(live.value, expected), REMOVE)
    },
    async increment(whole, by, ttlMs) {
      const key = nameOf(whole)
      if (!Number.isSafeInteger(by)) throw new TypeError(`increment: by must be a safe integer, got ${by}`)
      if (raw.increment) {
        const now = Date.now()
        const written = await raw.increment(key, by, await encode(whole, by, expiry(ttlMs, now)), now, ttlMs)
        if (written !== undefined) return integer((await decode(written))?.value)
      }
      // No native counter (the Keyv does not write plain JSON), or one that wrote nothing (not a safe integer, a sum past one,
      // or an entry it cannot read): a compare-and-swap loop, which refuses before it writes.
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const stored = await raw.read(key)
        const entry = await decode(stored)
        const live = entry && !expired(entry) ? entry : undefined
        const value = live === undefined ? by : sum(integer(live.value), by)
        const expires = live ? (typeof live.expires === 'number' ? live.expires : undefined) : expiry(ttlMs)
        const keptTtl = expires === undefined ? undefined : Math.max(1, Math.ceil(expires - Date.now()))
        const written = await encode(whole, value, expires)
        if (stored === undefined ? await raw.insert(key, written, ttlMs) : await raw.swap(key, stored, written, keptTtl)) return value
      }
      throw new Error(`increment: ${MAX_ATTEMPTS} writes in a row lost to other writers`)
    },
    async remove(key) {
      const entry = await decode(await raw.remove(nameOf(key)))
      return entry !== undefined && !expired(entry)
    },
    async sweep(entries, stopped) {
      let removed = 0
      for await (const [key, stored] of entries) {
        if (stopped()) break
        const entry = await decode(stored)
        if (entry && expired(entry) && (await raw.swap(key, stored, undefined))) removed++
      }
      return removed
    },
  }
}

// --- Internal helpers ---

/** Keyv's stored wrapper. */
interface Entry {
  value: unknown
  expires?: number | null
}

/** Marks a conditional write that removes the key. */
const REMOVE = Symbol('remove')

/** A step that loses this many writes in a row to other writers gives up (a guard against a livelock, never reached by honest contention). */
const MAX_ATTEMPTS = 1000

/** Keyv's rule: expired once `now` is past `expires`. */
function expired(entry: Entry, now = Date.now()): boolean {
  return typeof entry.expires === 'number' && now > entry.expires
}

/** Keyv's `expires` for a ttl (ms from now), or undefined for none. */
function expiry(ttlMs: number | undefined, now = Date.now()): number | undefined {
  return ttlMs === undefined ? undefined : now + ttlMs
}

/** `value + by`, or a RangeError when that is not a safe integer (it would be written inexact, and no later increment could read it). */
function sum(value: number, by: number): number {
  if (!Number.isSafeInteger(value + by)) throw new RangeError(`increment: ${value} + ${by} is not a safe integer; the counter is left at ${value}`)
  return value + by
}

function integer(value: unknown): number {
  if (!Number.isSafeInteger(value)) throw new TypeError(`increment: the stored value is not an integer (${JSON.stringify(value)})`)
  return value as number
}
