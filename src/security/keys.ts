import { hash, randomBytes, randomInt, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto'

/** A random secret of `bytes` bytes, base64url (no padding). 18 bytes = 144 bits. */
export function randomKey(bytes = 24): string {
  return randomBytes(bytes).toString('base64url')
}

/** This process's random prefix for uniqueTag, and its count. */
const TAG_PREFIX = randomBytes(9).toString('base64url')
let tags = 0

/** A text no other call in any process gives (a random prefix per process and a count): unique, not secret; no random bytes per call. */
export function uniqueTag(): string {
  return `${TAG_PREFIX}${(++tags).toString(36)}`
}

/** A random string of `length` decimal digits drawn from `alphabet` (uniform, crypto-grade). */
export function randomDigits(length: number, alphabet = '0123456789'): string {
  let out = ''
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)]
  return out
}

/**
 * SHA-256 of a high-entropy key (authkey, appkey, link token), hex. Such keys are looked up by this
 * hash and never stored in clear; a fast hash is right for random keys (passwords use scrypt).
 */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex')
}

/**
 * Constant-time equality of two strings (false when the lengths differ): every code unit is compared,
 * whatever the first difference. In JavaScript rather than `timingSafeEqual`, whose two Buffer copies
 * per call cost a send about 2 % of its CPU for the two key checks (bench/README.md).
 */
export function safeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}

const SCRYPT: ScryptOptions = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }

function scrypt(password: string, salt: Buffer, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCb(password.normalize('NFKC'), salt, length, SCRYPT, (err, key) => (err ? reject(err) : resolve(key))))
}

/** A salted scrypt hash of a password: `scrypt$N$r$p$<salt b64>$<hash b64>`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const hash = await scrypt(password, salt, 32)
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${hash.toString('base64')}`
}

/** Whether `password` matches a hash made by hashPassword (constant-time compare). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, , , , salt, hash] = stored.split('$')
  if (scheme !== 'scrypt' || !salt || !hash) return false
  const expected = Buffer.from(hash, 'base64')
  const actual = await scrypt(password, Buffer.from(salt, 'base64'), expected.length)
  return timingSafeEqual(actual, expected)
}
