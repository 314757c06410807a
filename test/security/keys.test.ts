import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { hashKey, hashPassword, randomDigits, randomKey, safeEqual, verifyPassword } from '../../src/security/keys.ts'

const keys = suite('keys and passwords')

keys('randomKey(24) has 192 bits of entropy in base64url and never repeats', () => {
  const seen = new Set(Array.from({ length: 1000 }, () => randomKey(24)))
  assert.is(seen.size, 1000)
  for (const key of seen) assert.match(key, /^[A-Za-z0-9_-]{32}$/)
})

keys('randomDigits draws only from the alphabet', () => {
  const code = randomDigits(8000, '123456789')
  assert.is(code.length, 8000)
  assert.not.match(code, /0/)
  for (const d of '123456789') assert.ok(code.includes(d))
})

keys('hashKey is a stable SHA-256 hex digest', () => {
  assert.is(hashKey('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
})

keys('safeEqual compares strings of any length', () => {
  assert.ok(safeEqual('abc', 'abc'))
  assert.not.ok(safeEqual('abc', 'abd'))
  assert.not.ok(safeEqual('abc', 'abcd'))
  assert.ok(safeEqual('', ''))
  // A difference anywhere counts, the first code unit and the last alike, beyond ASCII too.
  const digest = hashKey('k')
  assert.not.ok(safeEqual(digest, (digest.startsWith('0') ? '1' : '0') + digest.slice(1)))
  assert.not.ok(safeEqual(digest, digest.slice(0, -1) + (digest.endsWith('0') ? '1' : '0')))
  assert.ok(safeEqual('ação ✓', 'ação ✓'))
  assert.not.ok(safeEqual('ação', 'açao'))
  assert.not.ok(safeEqual('a\uD800', 'a\uDC00')) // two lone surrogates: the same bytes once encoded as UTF-8, not the same text
})

keys('hashPassword makes salted scrypt hashes that verifyPassword accepts', async () => {
  const a = await hashPassword('s3nha-forte')
  const b = await hashPassword('s3nha-forte')
  assert.match(a, /^scrypt\$16384\$8\$1\$/)
  assert.is.not(a, b)
  assert.ok(await verifyPassword('s3nha-forte', a))
  assert.not.ok(await verifyPassword('s3nha-fraca', a))
  assert.not.ok(await verifyPassword('x', 'garbage'))
  assert.not.ok(a.includes('s3nha-forte'))
})

keys.run()
