import assert from 'node:assert/strict'
import { createHash, createHmac } from 'node:crypto'
import { suite } from 'uvu'
import { ForwardHeaders, sameBytes, signForward, verifyForward, type ForwardSigned } from '../../../src/http/forwarding/signature.ts'
import { forwardableFields } from '../../../src/http/forwarding/send.ts'

const test = suite('forwarded request signatures')

const SECRET = 'cluster-secret-for-tests'
const NOW = 1_750_000_000_000
const BODY = '{"appkey":"k","authkey":"a","to":"5511988880002","message":"olá"}'

const signed: ForwardSigned = {
  method: 'POST',
  path: '/api/create-message',
  timestamp: NOW,
  nonce: 'n0nce',
  from: 'instance-a',
  to: 'instance-b',
  clientIp: '203.0.113.9',
  baseUrl: 'https://api.example.com',
  body: BODY,
}

/** The request a receiver sees for `s`, with the headers the forwarder sends. */
function received(s: ForwardSigned, signature = signForward(SECRET, s)) {
  return {
    receiver: 'instance-b',
    method: s.method,
    path: s.path,
    body: s.body,
    headers: {
      [ForwardHeaders.forwardedBy]: s.from,
      [ForwardHeaders.forwardedTo]: s.to,
      [ForwardHeaders.timestamp]: String(s.timestamp),
      [ForwardHeaders.nonce]: s.nonce,
      [ForwardHeaders.clientIp]: s.clientIp,
      [ForwardHeaders.baseUrl]: s.baseUrl,
      [ForwardHeaders.signature]: signature,
    },
  }
}

test('the signature is the base64url HMAC-SHA256 of the documented canonical string', () => {
  const canonical = [
    'zapgate-forward-v2',
    'POST',
    '/api/create-message',
    String(NOW),
    'n0nce',
    'instance-a',
    'instance-b',
    '203.0.113.9',
    'https://api.example.com',
    createHash('sha256').update(BODY, 'utf8').digest('hex'),
  ].join('\n')
  const expected = createHmac('sha256', SECRET).update(canonical).digest('base64url')
  assert.equal(signForward(SECRET, signed), expected)
  assert.match(expected, /^[A-Za-z0-9_-]{43}$/)
})

test('the body is signed as bytes: a string and its UTF-8 Buffer sign alike', () => {
  assert.equal(signForward(SECRET, { ...signed, body: Buffer.from(BODY, 'utf8') }), signForward(SECRET, signed))
  assert.notEqual(signForward(SECRET, { ...signed, body: Buffer.from(BODY, 'latin1') }), signForward(SECRET, signed))
})

test('verifyForward accepts a request signed with the secret', () => {
  assert.equal(verifyForward(SECRET, received(signed), NOW), 'ok')
  assert.equal(verifyForward(Buffer.from(SECRET), received(signed), NOW + 1000), 'ok')
})

test('verifyForward refuses a request signed with another secret', () => {
  assert.equal(verifyForward(SECRET, received(signed, signForward('another-secret', signed)), NOW), 'bad-signature')
  assert.equal(verifyForward('another-secret', received(signed), NOW), 'bad-signature')
})

test('verifyForward refuses a request when any signed part changed', () => {
  const signature = signForward(SECRET, signed)
  const changes: [string, ReturnType<typeof received>][] = [
    ['method', { ...received(signed, signature), method: 'PUT' }],
    ['path', { ...received(signed, signature), path: '/api/groups' }],
    ['query', { ...received(signed, signature), path: '/api/create-message?x=1' }],
    ['one body character', { ...received(signed, signature), body: BODY.replace('olá', 'olé') }],
    ['an empty body', { ...received(signed, signature), body: '' }],
  ]
  for (const header of [ForwardHeaders.forwardedBy, ForwardHeaders.nonce, ForwardHeaders.clientIp, ForwardHeaders.baseUrl, ForwardHeaders.timestamp]) {
    const request = received(signed, signature)
    request.headers[header] = header === ForwardHeaders.timestamp ? String(NOW + 1) : 'other'
    changes.push([header, request])
  }
  const dropped = received(signed, signature)
  delete dropped.headers[ForwardHeaders.clientIp]
  changes.push(['client IP header dropped', dropped])
  for (const [what, request] of changes) assert.equal(verifyForward(SECRET, request, NOW), 'bad-signature', what)
})

test('verifyForward refuses a request signed for another instance, whatever its destination header says', () => {
  // A copy played to instance-c (e.g. the device's new holder after a handover).
  assert.equal(verifyForward(SECRET, { ...received(signed), receiver: 'instance-c' }, NOW), 'wrong-destination')
  const rewritten = { ...received(signed), receiver: 'instance-c' }
  rewritten.headers[ForwardHeaders.forwardedTo] = 'instance-c'
  assert.equal(verifyForward(SECRET, rewritten, NOW), 'bad-signature', 'the destination is signed')
  const dropped = received(signed)
  delete dropped.headers[ForwardHeaders.forwardedTo]
  assert.equal(verifyForward(SECRET, dropped, NOW), 'wrong-destination', 'no destination header')
  assert.equal(
    verifyForward(SECRET, { ...received({ ...signed, to: '' }), receiver: '' }, NOW),
    'wrong-destination',
    'a receiver without an id accepts nothing',
  )
})

test('verifyForward says missing without a timestamp or signature', () => {
  for (const header of [ForwardHeaders.timestamp, ForwardHeaders.signature]) {
    const request = received(signed)
    delete request.headers[header]
    assert.equal(verifyForward(SECRET, request, NOW), 'missing', header)
    request.headers[header] = ''
    assert.equal(verifyForward(SECRET, request, NOW), 'missing', `${header} empty`)
  }
})

test('verifyForward refuses a timestamp older or newer than the tolerance as stale', () => {
  assert.equal(verifyForward(SECRET, received(signed), NOW + 30_000), 'ok')
  assert.equal(verifyForward(SECRET, received(signed), NOW - 30_000), 'ok')
  assert.equal(verifyForward(SECRET, received(signed), NOW + 30_001), 'stale')
  assert.equal(verifyForward(SECRET, received(signed), NOW - 30_001), 'stale')
  assert.equal(verifyForward(SECRET, received(signed), NOW + 5_001, 5_000), 'stale')
  const old = { ...signed, timestamp: NOW - 60_000 }
  assert.equal(verifyForward(SECRET, received(old), NOW), 'stale', 'even with a signature that matches')
})

test('verifyForward refuses a timestamp that is not a number of milliseconds', () => {
  for (const stamp of ['abc', '1.5e12', '-1750000000000', ' 1750000000000', '12345678901234567'])
    assert.equal(
      verifyForward(SECRET, { ...received(signed), headers: { ...received(signed).headers, [ForwardHeaders.timestamp]: stamp } }, NOW),
      'bad-signature',
      stamp,
    )
})

test('a signature of another length is refused without throwing (timingSafeEqual only sees equal lengths)', () => {
  const good = signForward(SECRET, signed)
  for (const signature of [good.slice(0, 42), good.slice(0, 10), good + 'AA', good + good, 'x', '%%%%', Buffer.alloc(31).toString('base64url')])
    assert.equal(verifyForward(SECRET, received(signed, signature), NOW), 'bad-signature', signature)
  assert.equal(sameBytes(Buffer.alloc(31), Buffer.alloc(32)), false)
  assert.equal(sameBytes(Buffer.alloc(33), Buffer.alloc(32)), false)
  assert.equal(sameBytes(Buffer.alloc(0), Buffer.alloc(32)), false)
  assert.equal(sameBytes(Buffer.alloc(32, 7), Buffer.alloc(32, 7)), true)
  assert.equal(sameBytes(Buffer.alloc(32, 7), Buffer.alloc(32, 8)), false)
})

test('an empty secret is refused outright rather than signing with it', () => {
  assert.throws(() => signForward('', signed), /secret is empty/)
  assert.throws(() => verifyForward('', received(signed), NOW), /secret is empty/)
})

test('forwardableFields puts each upload into its field as a data URI and keeps the file name in message', () => {
  const data = Buffer.from([0, 1, 2, 250, 251, 252])
  const fields = { appkey: 'k', file: 'C:\\fotos\\relatório.pdf', descricao: 'x' }
  const out = forwardableFields(fields, new Map([['file', { data, fileName: 'C:\\fotos\\relatório.pdf', mimetype: 'application/pdf' }]]))
  assert.deepEqual(out, { appkey: 'k', file: `data:application/pdf;base64,${data.toString('base64')}`, descricao: 'x', message: 'relatório.pdf' })
  assert.deepEqual(fields.file, 'C:\\fotos\\relatório.pdf', 'the fields given are left as they were')
  const named = forwardableFields({ file: 'a.bin', message: 'nome.bin' }, new Map([['file', { data, fileName: 'a.bin' }]]))
  assert.deepEqual(named, { file: `data:;base64,${data.toString('base64')}`, message: 'nome.bin' }, 'a message given stays; no type gives none')
  const typed = forwardableFields(
    {},
    new Map([
      ['file', { data, mimetype: 'Text/Plain; charset=utf-8' }],
      ['other', { data, mimetype: 'not a type', fileName: 'o.txt' }],
    ]),
  )
  assert.deepEqual(typed, { file: `data:text/plain;base64,${data.toString('base64')}`, other: `data:;base64,${data.toString('base64')}` })
  const long = forwardableFields({}, new Map([['file', { data, fileName: `${'n'.repeat(300)}.txt` }]]))
  assert.equal((long.message as string).length, 200)
  const plain = { a: 1 }
  assert.equal(forwardableFields(plain, new Map()), plain, 'no uploads: the fields as they are')
})

test.run()
