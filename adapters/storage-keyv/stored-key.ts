import { createHash } from 'node:crypto'
import type Keyv from 'keyv'

/**
 * How the storage names a key in its store: the namespace `base` and the key, unless the store limits
 * a key's length (@keyv/postgres: `VARCHAR(keySize)`, 255 by default) and that is longer. Then its
 * first characters, `~` and a hash of the whole: one key always maps to one stored key, a listing of
 * a short prefix still finds it (the gateway lists short prefixes: a device's, a kind's), and two long
 * keys that start alike never meet. The store refused such a key before, with a message id a sender
 * chose in it (an agent's `flow-taken` mark, a Baileys `msg:` key). Such an entry also keeps its whole key (ORIGINAL_KEY).
 */
export function storedKey(keyv: Keyv): (whole: string) => string {
  const limit = keyLimitOf(keyv)
  const { one, all } = unsendableOf(keyv)
  return whole => {
    // A lone surrogate reaches the store as U+FFFD (UTF-8 has none): `x\uD800` and `x\uD801` would be one key; PostgreSQL refuses
    // a NUL in text. Such a key is stored under its form with each of them as U+FFFD, `~` and a hash of its UTF-16 code units, as a long key is.
    if (one.test(whole)) {
      const hash = createHash('sha256').update(Buffer.from(whole, 'utf16le')).digest('base64url')
      return `${whole.replace(all, '\uFFFD').slice(0, limit === Infinity ? undefined : limit - HASHED_TAIL)}~${hash}`
    }
    return whole.length <= limit ? whole : `${whole.slice(0, limit - HASHED_TAIL)}~${createHash('sha256').update(whole).digest('base64url')}`
  }
}

/**
 * The start shared by the stored names of every Keyv key that starts with `prefix` (`<namespace>:` included): the prefix
 * with its lone surrogates (and, on PostgreSQL, its NULs) as stored (U+FFFD), cut where a long key's name is cut, and without a last high surrogate (the
 * next character of a longer key may pair with it, or the cut may split the pair). A listing asks the store for this start,
 * then keeps the keys that start with `prefix` itself, read from each entry's ORIGINAL_KEY where its name was hashed.
 */
export function nameStart(keyv: Keyv, prefix: string): string {
  const limit = keyLimitOf(keyv)
  const start = prefix.replace(TRAILING_HIGH, '').replace(unsendableOf(keyv).all, '\uFFFD')
  return limit === Infinity || start.length <= limit - HASHED_TAIL ? start : start.slice(0, limit - HASHED_TAIL).replace(TRAILING_HIGH, '')
}

/**
 * The field of Keyv's stored wrapper (`{value, expires}`) that holds the whole Keyv key of an entry whose name was hashed
 * (a long key on PostgreSQL, a key holding a lone surrogate), as the base64url of its UTF-16 code units: the name alone
 * cannot tell a listing whether the key starts with a prefix longer than its kept start, nor give the key back. Keyv
 * itself reads only `value` and `expires`.
 */
const ORIGINAL_KEY = 'zapgateKey'

/** The ORIGINAL_KEY field for Keyv key `whole` stored under `name`: none where the name is the key itself. */
export function originalField(whole: string, name: string): { [ORIGINAL_KEY]?: string } {
  return name === whole ? {} : { [ORIGINAL_KEY]: Buffer.from(whole, 'utf16le').toString('base64url') }
}

/** The Keyv key an entry stored under `name` was written for: its ORIGINAL_KEY when it has one (a hashed name), else the name. */
export function originalKey(name: string, data: object): string {
  const field = (data as { [ORIGINAL_KEY]?: unknown })[ORIGINAL_KEY]
  return typeof field === 'string' ? Buffer.from(field, 'base64url').toString('utf16le') : name
}

/** Keyv's `set` of Keyv key `whole` under its stored name; where the name is hashed, with the whole key kept in the entry (ORIGINAL_KEY). */
export async function setNamed(keyv: Keyv, nameOf: (whole: string) => string, whole: string, value: unknown, ttlMs: number | undefined): Promise<boolean> {
  const name = nameOf(whole)
  if (name === whole) return keyv.set(name, value, ttlMs)
  // What Keyv's set does (its wrapper, its store's set), with the one more field. Its key prefix leaves `name` as it is.
  const expires = ttlMs === undefined ? undefined : Date.now() + ttlMs
  const written = await keyv.store.set(name, await keyv.serializeData({ value, expires, ...originalField(whole, name) } as never), ttlMs)
  return typeof written === 'boolean' ? written : true
}

/**
 * Keyv's `delete` of a stored name, answering true only for a live entry, as the port's `delete` does on every store (a
 * store with the atomic steps removes and judges in one step; over any other, for one process, one read more, which
 * also removes an expired entry). Keyv's own answers true for an expired entry where the store keeps it until read.
 */
export async function deleteLive(keyv: Keyv, name: string): Promise<boolean> {
  return (await keyv.get(name)) !== undefined && keyv.delete(name)
}

/** A high surrogate ending a string. */
const TRAILING_HIGH = /[\uD800-\uDBFF]$/

/** A UTF-16 code unit of a surrogate pair standing alone. */
const LONE_SURROGATE = /\p{Cs}/u
const LONE_SURROGATE_ALL = /\p{Cs}/gu

/** A lone surrogate or a NUL (which PostgreSQL refuses in text). */
const LONE_SURROGATE_OR_NUL = /[\p{Cs}\u0000]/u
const LONE_SURROGATE_OR_NUL_ALL = /[\p{Cs}\u0000]/gu

/** The characters a key cannot reach the store with as they are (`one` finds one, `all` each): a lone surrogate, and on PostgreSQL a NUL. */
function unsendableOf(keyv: Keyv): { one: RegExp; all: RegExp } {
  return isPostgres(keyv) ? { one: LONE_SURROGATE_OR_NUL, all: LONE_SURROGATE_OR_NUL_ALL } : { one: LONE_SURROGATE, all: LONE_SURROGATE_ALL }
}

/** `~` and a base64url SHA-256. */
const HASHED_TAIL = 44

/** The longest key the store takes, in characters (JavaScript's UTF-16 units: never fewer than PostgreSQL's characters). */
function keyLimitOf(keyv: Keyv): number {
  return isPostgres(keyv) ? Number(storeOpts(keyv)?.keySize) || 255 : Infinity
}

/** Whether the Keyv's store is @keyv/postgres. */
function isPostgres(keyv: Keyv): boolean {
  return storeOpts(keyv)?.dialect === 'postgres'
}

function storeOpts(keyv: Keyv): { dialect?: unknown; keySize?: unknown } | undefined {
  return (keyv.store as { opts?: { dialect?: unknown; keySize?: unknown } } | undefined)?.opts
}

/** A namespace as given; refused when empty or holding `:` (the stores' key separator: namespaces `a` and `a:b` would share keys, `b:x` of one being `x` of the other). */
export function checkedNamespace(namespace: string): string {
  if (namespace === '' || namespace.includes(':'))
    throw new Error(`storage namespace ${JSON.stringify(namespace)}: give a non-empty one without ":" (with one, two namespaces can share keys)`)
  return namespace
}
