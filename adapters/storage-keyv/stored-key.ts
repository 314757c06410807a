import { createHash } from 'node:crypto'
import type Keyv from 'keyv'

/**
 * How the storage names a key in its store: the namespace `base` and the key, unless the store limits
 * a key's length (@keyv/postgres: `VARCHAR(keySize)`, 255 by default) and that is longer. Then its
 * first characters, `~` and a hash of the whole: one key always maps to one stored key, a listing of
 * a short prefix still finds it (the gateway lists short prefixes: a device's, a kind's), and two long
 * keys that start alike never meet. The store refused such a key before, with a message id a sender
 * chose in it (an agent's `flow-taken` mark, a Baileys `msg:` key).
 */
export function storedKey(base: string, keyv: Keyv): (key: string) => string {
  const limit = keyLimitOf(keyv)
  return key => {
    const whole = base + key
    // A lone surrogate reaches the store as U+FFFD (UTF-8 has none): `x\uD800` and `x\uD801` would be one key. Such a key
    // is stored under its well-formed form, `~` and a hash of its UTF-16 code units, as a long key is.
    if (LONE_SURROGATE.test(whole)) {
      const hash = createHash('sha256').update(Buffer.from(whole, 'utf16le')).digest('base64url')
      return `${whole.replace(LONE_SURROGATE_ALL, '\uFFFD').slice(0, limit === Infinity ? undefined : limit - HASHED_TAIL)}~${hash}`
    }
    return whole.length <= limit ? whole : `${whole.slice(0, limit - HASHED_TAIL)}~${createHash('sha256').update(whole).digest('base64url')}`
  }
}

/** A UTF-16 code unit of a surrogate pair standing alone. */
const LONE_SURROGATE = /\p{Cs}/u
const LONE_SURROGATE_ALL = /\p{Cs}/gu

/** `~` and a base64url SHA-256. */
const HASHED_TAIL = 44

/** The longest key the store takes, in characters (JavaScript's UTF-16 units: never fewer than PostgreSQL's characters). */
function keyLimitOf(keyv: Keyv): number {
  const opts = (keyv.store as { opts?: { dialect?: unknown; keySize?: unknown } } | undefined)?.opts
  return opts?.dialect === 'postgres' ? Number(opts.keySize) || 255 : Infinity
}

/** A namespace as given; refused when empty or holding `:` (the stores' key separator: namespaces `a` and `a:b` would share keys, `b:x` of one being `x` of the other). */
export function checkedNamespace(namespace: string): string {
  if (namespace === '' || namespace.includes(':'))
    throw new Error(`storage namespace ${JSON.stringify(namespace)}: give a non-empty one without ":" (with one, two namespaces can share keys)`)
  return namespace
}
