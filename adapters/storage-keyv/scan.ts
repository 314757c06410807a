import type Keyv from 'keyv'
import type { KeyvAtomicSteps } from './atomic.ts'
import { nameStart, originalKey } from './stored-key.ts'

/**
 * Every live entry whose Keyv key (the key handed to `keyv.get`) starts with `prefix`, as
 * `[keyvKey, value]`. The prefix goes down to the store as an indexed range (SQLite), an escaped
 * LIKE (PostgreSQL) or an escaped SCAN MATCH (Redis), so listing one collection does not read the
 * others; a Map (the memory store) is scanned by key before any value is parsed; other stores
 * fall back to Keyv's own iterator, filtered here. The store is asked for the start that every
 * stored name of such a key has (a hashed name keeps only the key's start, see stored-key.ts), and
 * each entry is kept by the key it was written for (its ORIGINAL_KEY, where its name is hashed).
 */
export async function* scanPrefix(keyv: Keyv, prefix: string): AsyncIterable<[string, unknown]> {
  const entries = rawEntries(keyv, nameStart(keyv, prefix))
  if (entries === undefined) {
    if (typeof keyv.iterator !== 'function') throw new Error('this Keyv store cannot list its keys (no iterator)')
    // Keyv's iterator yields keys without its `<namespace>:` prefix and values already decoded.
    // Some store iterators report a failure only as an `error` event and then stop early.
    const namespace = keyv.useKeyPrefix && keyv.namespace ? `${keyv.namespace}:` : ''
    let failure: unknown
    const onError = (error: unknown) => (failure ??= error)
    keyv.on('error', onError)
    try {
      for await (const [key, value] of keyv.iterator(undefined)) {
        if (typeof key === 'string' && (namespace + key).startsWith(prefix)) yield [namespace + key, value]
      }
    } finally {
      keyv.off('error', onError)
    }
    if (failure !== undefined) throw failure
    return
  }
  for await (const [name, stored] of entries) {
    const data = await keyv.deserializeData(stored as string)
    if (data === undefined || data === null) continue
    if (typeof data.expires === 'number' && Date.now() > data.expires) continue
    const key = originalKey(name, data)
    if (key.startsWith(prefix)) yield [key, data.value]
  }
}

/** Every entry whose Keyv key starts with `prefix`, expired ones too, as `[keyvKey, stored]` (still serialised); undefined for a store without a prefix scan. */
function rawEntries(keyv: Keyv, prefix: string): AsyncIterable<[string, unknown]> | undefined {
  const raw = rawScanner(keyv.store)
  if (raw === undefined) return undefined
  const full = raw.storePrefix + prefix
  return (async function* () {
    for await (const [storeKey, stored] of raw.scan(full)) if (storeKey.startsWith(full)) yield [storeKey.slice(raw.storePrefix.length), stored]
  })()
}

/**
 * Every `intervalMs`, remove the expired entries under `prefix` (one sweep at a time), where the store drops an expired entry only
 * when it is read (the memory Map, SQLite, PostgreSQL; Redis expires keys itself): one never read again (a message's, a rate
 * window's, a deleted device's) would stay for ever. A failed sweep is tried again at the next (a store that is down shows in
 * every other call). `stop()` ends the sweep under way (before the store is closed); undefined for Redis and stores without a prefix scan.
 */
export function sweepExpired(
  keyv: Keyv,
  steps: Pick<KeyvAtomicSteps, 'sweep'>,
  prefix: string,
  intervalMs: number,
): { stop(): Promise<unknown> | undefined } | undefined {
  if (rawScanner(keyv.store) === undefined || keyv.store?.opts?.dialect === 'redis') return undefined
  let stopped = false
  let sweeping: Promise<unknown> | undefined
  const timer = setInterval(() => {
    sweeping ??= steps
      .sweep(rawEntries(keyv, prefix)!, () => stopped)
      .catch(() => 0)
      .finally(() => (sweeping = undefined))
  }, intervalMs).unref()
  return { stop: () => ((stopped = true), clearInterval(timer), sweeping) }
}

// --- Internal helpers ---

/** Rows per round trip when paging through a SQL table. */
const PAGE = 500

type RawScan = (prefix: string) => AsyncIterable<[storeKey: string, stored: unknown]>

/** A scan that yields the store's own keys and stored (still serialised) values, when the store is known. */
function rawScanner(store: any): { storePrefix: string; scan: RawScan } | undefined {
  if (store instanceof Map) return { storePrefix: '', scan: prefix => scanMap(store, prefix) }
  const dialect = store?.opts?.dialect
  if (dialect === 'sqlite' && typeof store.query === 'function') {
    return { storePrefix: '', scan: prefix => scanSqlite(store, prefix) }
  }
  if (dialect === 'postgres' && typeof store.query === 'function') {
    return { storePrefix: '', scan: prefix => scanPostgres(store, prefix) }
  }
  if (dialect === 'redis' && typeof store.getMasterNodes === 'function' && typeof store.mget === 'function') {
    // KeyvRedis adds `<namespace><separator>` in front of the keys Keyv gives it.
    const storePrefix = store.namespace ? `${store.namespace}${store.keyPrefixSeparator}` : ''
    return { storePrefix, scan: prefix => scanRedis(store, prefix) }
  }
  return undefined
}

async function* scanMap(map: Map<unknown, unknown>, prefix: string): AsyncIterable<[string, unknown]> {
  const keys: string[] = []
  for (const key of map.keys()) if (typeof key === 'string' && key.startsWith(prefix)) keys.push(key)
  for (const key of keys) {
    const stored = map.get(key)
    if (stored !== undefined) yield [key, stored]
  }
}

/**
 * Keyset pages over the primary key: `key >= prefix AND key < end-of-prefix`. SQLite compares TEXT
 * bytewise (BINARY collation), so this is exactly the prefix, uses the index, and has no wildcard
 * (LIKE would also be case-insensitive). Keyset paging, unlike Keyv's OFFSET paging, misses no row
 * when rows are deleted during the scan.
 */
async function* scanSqlite(store: any, prefix: string): AsyncIterable<[string, unknown]> {
  const end = prefixEnd(prefix)
  let after: string | undefined
  for (;;) {
    const conditions = [after === undefined ? 'key >= ?' : 'key > ?']
    const params = [after ?? prefix]
    if (end !== undefined) (conditions.push('key < ?'), params.push(end))
    const sql = `SELECT key, value FROM ${store.opts.table} WHERE ${conditions.join(' AND ')} ORDER BY key LIMIT ${PAGE}`
    const rows: Array<{ key: string; value: string }> = await store.query(sql, params)
    for (const row of rows) yield [row.key, row.value]
    if (rows.length < PAGE) return
    after = rows[rows.length - 1].key
  }
}

/** Keyset pages with an escaped LIKE (range bounds would be wrong under a non-C collation). */
async function* scanPostgres(store: any, prefix: string): AsyncIterable<[string, unknown]> {
  const table = `${store.opts.schema}.${store.opts.table}`
  const pattern = `${prefix.replace(/[\\%_]/g, '\\$&')}%`
  let after: string | undefined
  for (;;) {
    const sql = `SELECT key, value FROM ${table} WHERE key LIKE $1 ESCAPE '\\'${after === undefined ? '' : ' AND key > $2'} ORDER BY key LIMIT ${PAGE}`
    const rows: Array<{ key: string; value: string }> = await store.query(sql, after === undefined ? [pattern] : [pattern, after])
    for (const row of rows) yield [row.key, row.value]
    if (rows.length < PAGE) return
    after = rows[rows.length - 1].key
  }
}

/** SCAN with an escaped glob on every master, values fetched per batch with MGET. */
async function* scanRedis(store: any, prefix: string): AsyncIterable<[string, unknown]> {
  const match = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`
  const seen = new Set<string>() // SCAN may return a key twice
  for (const client of await store.getMasterNodes()) {
    let cursor = '0'
    do {
      const result = await client.scan(cursor, { MATCH: match, COUNT: 1000, TYPE: 'string' })
      cursor = String(result.cursor)
      const keys = (result.keys as string[]).filter(key => !seen.has(key))
      for (const key of keys) seen.add(key)
      if (keys.length === 0) continue
      const values: Array<string | undefined> = await store.mget(keys)
      for (const [i, key] of keys.entries()) if (values[i] !== undefined) yield [key, values[i]]
    } while (cursor !== '0')
  }
}

/** The smallest string greater than every string that starts with `prefix` (undefined: none). */
function prefixEnd(prefix: string): string | undefined {
  const chars = Array.from(prefix)
  while (chars.length > 0) {
    const code = chars.pop()!.codePointAt(0)!
    if (code >= 0xd800 && code <= 0xdfff) return undefined // a lone surrogate: leave the range open
    if (code < 0x10ffff) return chars.join('') + String.fromCodePoint(code === 0xd7ff ? 0xe000 : code + 1)
  }
  return undefined
}
