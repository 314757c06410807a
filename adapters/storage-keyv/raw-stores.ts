import { createHash } from 'node:crypto'
import type Keyv from 'keyv'

/** A stored entry exactly as the Keyv store holds it (serialised text, or an object in a Map without serialiser). */
export type Raw = unknown

/**
 * The atomic steps of one backend, on Keyv keys (the key handed to `keyv.get`) and raw entries.
 * Each is one step of the backend itself: a Map step, one SQL statement, one Redis command or script.
 */
export interface RawStore {
  /** The raw entry under `key`, expired or not, or undefined. */
  read(key: string): Promise<Raw | undefined>
  /** Store `raw` only when there is no entry under `key` at all; true when stored. */
  insert(key: string, raw: Raw, ttlMs?: number): Promise<boolean>
  /** Replace the entry by `next` (or remove it, when undefined) only while it is still exactly `current`. */
  swap(key: string, current: Raw, next: Raw | undefined, ttlMs?: number): Promise<boolean>
  /**
   * Native counter over Keyv's JSON wrapper `{"value":n,"expires":t}` (only when the Keyv writes
   * plain JSON): add `by`, restart at `by` when the entry is missing or expired at `now` (writing
   * `fresh`), keep the expiry otherwise; resolves the raw entry written. Resolves undefined, writing
   * nothing, when the live value or the sum would not be a safe integer, or when the backend cannot read
   * this entry's JSON: the caller then judges with a compare-and-swap.
   */
  increment?(key: string, by: number, fresh: Raw, now: number, ttlMs?: number): Promise<Raw | undefined>
  /** Remove the entry in one step; resolves the entry this call removed (expired or not: the caller judges), or undefined. */
  remove(key: string): Promise<Raw | undefined>
}

/**
 * The RawStore of a Keyv whose store is known (a Map, @keyv/sqlite, @keyv/postgres, @keyv/redis),
 * reached through each store's public members (`query`, `getClient`, `createKeyPrefix`); undefined
 * for any other store, which then gets no atomic steps.
 */
export function rawStoreOf(keyv: Keyv): RawStore | undefined {
  const store: any = keyv.store
  const json = writesPlainJson(keyv)
  if (store instanceof Map) return mapStore(store, json)
  const dialect = store?.opts?.dialect
  if (dialect === 'sqlite' && typeof store.query === 'function') return sqlStore(store, store.opts.table, 'sqlite', json)
  if (dialect === 'postgres' && typeof store.query === 'function') return sqlStore(store, `${store.opts.schema}.${store.opts.table}`, 'postgres', json)
  if (dialect === 'redis' && typeof store.getClient === 'function' && typeof store.createKeyPrefix === 'function') return redisStore(store, json)
  return undefined
}

// --- Internal helpers ---

/** Whether the Keyv writes its `{value, expires}` wrapper as plain JSON (so a backend may edit it in place). */
function writesPlainJson(keyv: Keyv): boolean {
  if ((keyv.opts as { compression?: unknown }).compression) return false
  try {
    const text = keyv.serialize?.({ value: 1, expires: 2 })
    const back = keyv.deserialize?.('{"value":3,"expires":4}') as { value?: unknown; expires?: unknown } | undefined
    return text === '{"value":1,"expires":2}' && back?.value === 3 && back?.expires === 4
  } catch {
    return false
  }
}

/** The Keyv memory store: every step is one synchronous Map step (atomic within the process). */
function mapStore(map: Map<string, Raw>, json: boolean): RawStore {
  return {
    async read(key) {
      return map.get(key)
    },
    async insert(key, raw) {
      if (map.has(key)) return false
      map.set(key, raw)
      return true
    },
    async swap(key, current, next) {
      if (!map.has(key) || map.get(key) !== current) return false
      if (next === undefined) map.delete(key)
      else map.set(key, next)
      return true
    },
    async remove(key) {
      // Both in one synchronous step; awaited together for a Map-like store whose methods are async.
      const [raw] = await Promise.all([map.get(key), map.delete(key)])
      return raw
    },
    ...(json && {
      async increment(key, by, fresh, now) {
        const raw = map.get(key)
        const data = typeof raw === 'string' ? (JSON.parse(raw) as { value: unknown; expires?: number }) : undefined
        if (!data || (typeof data.expires === 'number' && now > data.expires)) {
          map.set(key, fresh)
          return fresh
        }
        if (!Number.isSafeInteger(data.value) || !Number.isSafeInteger((data.value as number) + by)) return undefined
        const written = JSON.stringify({ ...data, value: (data.value as number) + by })
        map.set(key, written)
        return written
      },
    }),
  }
}

/**
 * @keyv/sqlite and @keyv/postgres: table `(key VARCHAR PRIMARY KEY, value TEXT)`, no native ttl
 * (the expiry is only the wrapper's `expires`). Every step is one statement, so it is atomic by
 * itself: a writing statement takes the database's write lock before it reads (SQLite, waiting up
 * to the busy timeout; two processes on one file included) or locks the row it changes and
 * re-checks its condition (PostgreSQL). One statement rather than BEGIN IMMEDIATE ... COMMIT,
 * because @keyv/sqlite's one connection is shared by every caller of the store: other callers'
 * statements would land inside an open transaction.
 */
function sqlStore(store: { query(sql: string, values?: unknown[]): Promise<any[]> }, table: string, dialect: 'sqlite' | 'postgres', json: boolean): RawStore {
  // Numbered parameters ($n in PostgreSQL, ?n in SQLite): the n-th value, wherever it appears. sqlite3 binds a number outside
  // 32 bits as a REAL: `by` is cast, or the sum would be written as a real that the next increment leaves as it is.
  const $ = (n: number) => (dialect === 'postgres' ? `$${n}` : `?${n}`)
  const increment =
    dialect === 'postgres'
      ? `INSERT INTO ${table} AS t (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = CASE
           WHEN jsonb_typeof(t.value::jsonb -> 'expires') = 'number' AND (t.value::jsonb ->> 'expires')::numeric < $3 THEN excluded.value
           ELSE jsonb_set(t.value::jsonb, '{value}', to_jsonb((t.value::jsonb ->> 'value')::bigint + $4::bigint))::text
         END
         WHERE (jsonb_typeof(t.value::jsonb -> 'expires') = 'number' AND (t.value::jsonb ->> 'expires')::numeric < $3)
           OR (jsonb_typeof(t.value::jsonb -> 'value') = 'number' AND (t.value::jsonb ->> 'value')::numeric % 1 = 0
             AND abs((t.value::jsonb ->> 'value')::numeric) <= 9007199254740991
             AND abs((t.value::jsonb ->> 'value')::numeric + $4::numeric) <= 9007199254740991)
         RETURNING value`
      : `INSERT INTO ${table} (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = CASE
           WHEN json_type(value, '$.expires') IN ('integer', 'real') AND json_extract(value, '$.expires') < ?3 THEN excluded.value
           ELSE json_set(value, '$.value', json_extract(value, '$.value') + CAST(?4 AS INTEGER))
         END
         WHERE (json_type(value, '$.expires') IN ('integer', 'real') AND json_extract(value, '$.expires') < ?3)
           OR (json_type(value, '$.value') = 'integer' AND abs(json_extract(value, '$.value')) <= 9007199254740991
             AND abs(json_extract(value, '$.value') + CAST(?4 AS INTEGER)) <= 9007199254740991)
         RETURNING value`
  return {
    async read(key) {
      const rows = await store.query(`SELECT value FROM ${table} WHERE key = ${$(1)}`, [key])
      return rows[0]?.value ?? undefined
    },
    async insert(key, raw) {
      const rows = await store.query(`INSERT INTO ${table} (key, value) VALUES (${$(1)}, ${$(2)}) ON CONFLICT (key) DO NOTHING RETURNING key`, [key, raw])
      return rows.length === 1
    },
    async swap(key, current, next) {
      if (typeof current !== 'string') return false
      const rows =
        next === undefined
          ? await store.query(`DELETE FROM ${table} WHERE key = ${$(1)} AND value = ${$(2)} RETURNING key`, [key, current])
          : await store.query(`UPDATE ${table} SET value = ${$(3)} WHERE key = ${$(1)} AND value = ${$(2)} RETURNING key`, [key, current, next])
      return rows.length === 1
    },
    // @keyv/sqlite and @keyv/postgres delete with a SELECT then a DELETE: concurrent deletes of one key would all answer true.
    async remove(key) {
      return (await store.query(`DELETE FROM ${table} WHERE key = ${$(1)} RETURNING value`, [key]))[0]?.value ?? undefined
    },
    ...(json && {
      async increment(key, by, fresh, now) {
        try {
          // No row: the upsert's WHERE refused the update (not a safe integer, or a sum past one).
          return (await store.query(increment, [key, fresh, now, by]))[0]?.value ?? undefined
        } catch (error) {
          // jsonb refuses a JSON text holding an escaped NUL (22P05) or lone surrogate (22P02), in a string the port takes as any other:
          // no counter, live or expired, and the compare-and-swap judges it.
          if (['22P05', '22P02'].includes((error as { code?: unknown })?.code as string)) return undefined
          throw error
        }
      },
    }),
  }
}

/** The part of a node-redis client used here. */
interface RedisClient {
  set(key: string, value: string, options?: object): Promise<unknown>
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>
}

/**
 * Compare-and-swap on the exact stored bytes: ARGV = current, mode ("set" or "del"), next, ttl ms
 * ("" for none; SET without PX also drops an earlier ttl, like Keyv's set).
 */
const SWAP = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == 'del' then redis.call('DEL', KEYS[1]) return 1 end
if ARGV[4] == '' then redis.call('SET', KEYS[1], ARGV[3]) else redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4]) end
return 1`

/**
 * Counter over Keyv's JSON wrapper: ARGV = by, now, fresh entry, ttl ms ("" for none). A live safe
 * integer is raised by `by` when the sum is one too (its ttl kept); any other value, or a sum past a
 * safe integer, is left as it is and answers nil (the JS side judges it: %d of 1e20 would write
 * -2^63); a missing or expired entry becomes the fresh one. An entry cjson cannot decode (a string holding
 * a lone surrogate's escape, nesting past its depth) also answers nil: the JS side reads it, expired or not.
 * Numbers are written with %d, so they stay exact (cjson would round them to 14 digits); a hashed name's `zapgateKey`
 * (base64url: nothing to escape) is kept.
 */
const INCREMENT = `local raw = redis.call('GET', KEYS[1])
if raw then
  local decoded, data = pcall(cjson.decode, raw)
  if not decoded or type(data) ~= 'table' then return false end
  local expires = data['expires']
  if type(expires) ~= 'number' or expires >= tonumber(ARGV[2]) then
    local value = data['value']
    if type(value) ~= 'number' or value ~= math.floor(value) or math.abs(value) > 9007199254740991 then return false end
    local sum = value + tonumber(ARGV[1])
    if math.abs(sum) > 9007199254740991 then return false end
    local text = '{"value":' .. string.format('%d', sum)
    if type(expires) == 'number' then text = text .. ',"expires":' .. string.format('%d', expires) end
    if type(data['zapgateKey']) == 'string' then text = text .. ',"zapgateKey":"' .. data['zapgateKey'] .. '"' end
    text = text .. '}'
    redis.call('SET', KEYS[1], text, 'KEEPTTL')
    return text
  end
end
if ARGV[4] == '' then redis.call('SET', KEYS[1], ARGV[3]) else redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4]) end
return ARGV[3]`

/** GET then DEL in one step (GETDEL needs Redis 6.2). */
const REMOVE = `local raw = redis.call('GET', KEYS[1])
if raw then redis.call('DEL', KEYS[1]) end
return raw`

/** @keyv/redis: SET NX PX for insert, a Lua script (EVALSHA, loaded on first use) for the others. */
function redisStore(
  store: {
    getClient(): Promise<RedisClient>
    createKeyPrefix(key: string, namespace?: string): string
    get(key: string): Promise<string | undefined>
    namespace?: string
  },
  json: boolean,
): RawStore {
  const redisKey = (key: string) => store.createKeyPrefix(key, store.namespace)
  const script = async (source: string, key: string, args: string[]) => {
    const client = await store.getClient()
    const options = { keys: [redisKey(key)], arguments: args }
    try {
      return await client.evalSha(sha1(source), options)
    } catch (error) {
      if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error
      return client.eval(source, options)
    }
  }
  return {
    read: key => store.get(key),
    async insert(key, raw, ttlMs) {
      const client = await store.getClient()
      const expiration = ttlMs === undefined ? {} : { expiration: { type: 'PX', value: ttlMs } }
      return (await client.set(redisKey(key), text(raw), { condition: 'NX', ...expiration })) === 'OK'
    },
    async swap(key, current, next, ttlMs) {
      if (typeof current !== 'string') return false
      const args = next === undefined ? [current, 'del', '', ''] : [current, 'set', text(next), ttlMs === undefined ? '' : String(ttlMs)]
      return (await script(SWAP, key, args)) === 1
    },
    // The entry, to judge by its wrapper's expiry (as get does): Redis's own expiry of the key runs on the server's clock.
    remove: async key => ((await script(REMOVE, key, [])) ?? undefined) as Raw | undefined,
    ...(json && {
      increment: async (key, by, fresh, now, ttlMs) =>
        ((await script(INCREMENT, key, [String(by), String(now), text(fresh), ttlMs === undefined ? '' : String(ttlMs)])) ?? undefined) as Raw | undefined,
    }),
  }
}

function sha1(source: string): string {
  return createHash('sha1').update(source).digest('hex')
}

/** A serialised entry (a store that keeps text needs a Keyv with a serialiser). */
function text(raw: Raw): string {
  if (typeof raw !== 'string') throw new TypeError('this Keyv has no serialiser, and its store keeps text')
  return raw
}
