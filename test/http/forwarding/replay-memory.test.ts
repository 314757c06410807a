import { Readable } from 'node:stream'
import type { Context } from 'koa'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { forwardedRequestReader } from '../../../src/http/forwarding/receive.ts'
import { ForwardHeaders, signedHeaders } from '../../../src/http/forwarding/signature.ts'

/**
 * The holder's memory of accepted forward signatures (docs/scaling.md, "Replays"): a captured forward
 * played again is refused however its signature is written, and at any moment its timestamp still
 * passes, the last one included.
 */
const test = suite('forwarded requests: no replay through the signature memory')

const SECRET = 'segredo-do-cluster'
const ME = 'instance-b'
const TOLERANCE_MS = 30_000
const BODY = Buffer.from('{"message":"uma vez"}')

/** A forward from instance-a to this instance, signed at `timestamp`. */
function forward(timestamp: number): Record<string, string> {
  return signedHeaders(SECRET, { method: 'POST', path: '/api/create-message', timestamp, body: BODY, nonce: 'n-1', from: 'instance-a', to: ME })
}

/** What the reader says of a request with these headers: accepted, or the reason it was refused. */
async function verdict(read: ReturnType<typeof forwardedRequestReader>, headers: Record<string, string>): Promise<string> {
  const req = Object.assign(Readable.from([BODY]), { headers: { ...headers, 'content-length': String(BODY.length) } })
  const ctx = { req, request: {}, method: 'POST', originalUrl: '/api/create-message', state: {} } as unknown as Context
  try {
    await read(ctx)
    return 'accepted'
  } catch (err) {
    return String((err as { cause?: Error }).cause?.message)
  }
}

test("a replay with its signature written another way (padding, a stray character, the last character's unused bits) is refused", async () => {
  const read = forwardedRequestReader(SECRET, 1024, ME, TOLERANCE_MS)
  const headers = forward(Date.now())
  assert.is(await verdict(read, headers), 'accepted')
  assert.is(await verdict(read, headers), 'forwarded request refused: replayed')
  const signature = headers[ForwardHeaders.signature]!
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const lastBitFlipped = signature.slice(0, -1) + alphabet[alphabet.indexOf(signature.at(-1)!) ^ 1]
  for (const variant of [`${signature}=`, `${signature} `, lastBitFlipped]) {
    assert.is(await verdict(read, { ...headers, [ForwardHeaders.signature]: variant }), 'forwarded request refused: replayed', variant)
  }
})

test('a replay at the last moment its timestamp passes is refused, however many copies arrive then', async () => {
  const read = forwardedRequestReader(SECRET, 1024, ME, TOLERANCE_MS)
  const signedAt = Date.now()
  const headers = forward(signedAt)
  const realNow = Date.now
  try {
    assert.is(await verdict(read, headers), 'accepted')
    Date.now = () => signedAt + TOLERANCE_MS
    assert.is(await verdict(read, headers), 'forwarded request refused: replayed')
    assert.is(await verdict(read, headers), 'forwarded request refused: replayed')
    Date.now = () => signedAt + TOLERANCE_MS + 1
    assert.is(await verdict(read, headers), 'forwarded request refused: stale')
  } finally {
    Date.now = realNow
  }
})

test('signatures are forgotten in arrival order 60 s after they came, and every newer one is still refused when replayed', async () => {
  const read = forwardedRequestReader(SECRET, 1024, ME, TOLERANCE_MS)
  const start = Date.now()
  const realNow = Date.now
  const at = (ms: number) => (Date.now = () => start + ms)
  try {
    const accepted: Record<string, string>[] = []
    // Each request is signed when it arrives; the memory is swept as each one arrives.
    for (const ms of [0, 1, 61_002, 61_003, 90_000, 122_004, 122_005, 200_000]) {
      at(ms)
      const headers = forward(start + ms)
      assert.is(await verdict(read, headers), 'accepted', `at ${ms} ms`)
      assert.is(await verdict(read, headers), 'forwarded request refused: replayed', `replayed at ${ms} ms`)
      for (const earlier of accepted) {
        const age = start + ms - Number(earlier[ForwardHeaders.timestamp])
        assert.is(await verdict(read, earlier), `forwarded request refused: ${age > TOLERANCE_MS ? 'stale' : 'replayed'}`, `${age} ms old at ${ms} ms`)
      }
      accepted.push(headers)
    }
  } finally {
    Date.now = realNow
  }
})

test.run()
