import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import type { Server } from 'node:http'
import Koa from 'koa'
import { suite } from 'uvu'
import type { IncomingMessage } from '../../src/ports/transport.ts'
import { simulatorRoutes } from '../../adapters/transport-memory/index.ts'
import { memoryHarness } from './memory-harness.ts'
import type { MemoryHarness } from './memory-harness.ts'

const PHONE = '5511999990001'
const FRIEND = '5511988880002'
/** The account the stand-in for the gateway's findDevices knows, and its devices by id, appkey or name. */
const AUTHKEY = 'authkey-1'
const DEVICES = [
  { id: 'd1', refs: ['d1', 'key-1', 'loja'] },
  { id: 'd2', refs: ['d2', 'key-2', 'balcao'] },
  { id: 'd3', refs: ['d3', 'key-3', 'key-2'] },
]

interface Context {
  h: MemoryHarness
  server: Server
  base: string
}

const test = suite<Context>('transport-memory: /_sim routes over HTTP')

test.before.each(async ctx => {
  ctx.h = await memoryHarness()
  const app = new Koa()
  const router = simulatorRoutes(ctx.h.network, {
    findDevices: async (authkey, ref) => (authkey !== AUTHKEY ? undefined : DEVICES.filter(device => device.refs.includes(ref))),
  })
  app.use(router.routes()).use(router.allowedMethods())
  app.use(async koa => {
    if (koa.path !== '/host') return
    let raw = ''
    for await (const chunk of koa.req) raw += chunk
    koa.body = { parsed: koa.request.body ?? null, raw }
  })
  ctx.server = app.listen(0)
  await new Promise(resolve => ctx.server.once('listening', resolve))
  ctx.base = `http://127.0.0.1:${(ctx.server.address() as AddressInfo).port}`
})

test.after.each(async ctx => {
  await ctx.h.close()
  await new Promise(resolve => ctx.server.close(resolve))
})

async function call(ctx: Context, method: string, path: string, body?: unknown, type = 'application/json') {
  const encoded = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
  const response = await fetch(ctx.base + path, { method, body: encoded, headers: encoded ? { 'content-type': type } : {} })
  // Untyped on purpose: the assertions check the shape.
  return { status: response.status, body: (await response.json()) as any }
}

const messages = (h: MemoryHarness) => h.events.flatMap(e => (e.type === 'message' ? [e.message as IncomingMessage] : []))

test('POST /_sim/scan {appkey, phone} links the device as that phone', async ctx => {
  await ctx.h.transport.link('d1', {})
  const res = await call(ctx, 'POST', '/_sim/scan', { authkey: AUTHKEY, appkey: 'key-1', phone: `+${PHONE}` })
  assert.deepEqual(res, { status: 200, body: { status: 200, message: 'device linked', phone: PHONE } })
  assert.deepEqual(await ctx.h.transport.status('d1'), { state: 'open', connected: true, phone: PHONE })
})

test('POST /_sim/scan accepts a QR, or a pairing code from the phone it was issued for', async ctx => {
  const challenge = await ctx.h.transport.link('d1', {})
  assert.ok(challenge.kind === 'qr')
  assert.equal((await call(ctx, 'POST', '/_sim/scan', { qr: challenge.qr, phone: PHONE })).status, 200)
  await ctx.h.transport.link('d2', { phone: FRIEND, code: '11223344' })
  assert.equal((await call(ctx, 'POST', '/_sim/scan', { code: '11223344', phone: PHONE })).status, 404)
  assert.equal((await call(ctx, 'POST', '/_sim/scan', { code: '11223344', phone: FRIEND })).status, 200)
  assert.equal((await ctx.h.transport.status('d2')).phone, FRIEND)
})

test('POST /_sim/scan answers 404 for an unknown appkey or a device not linking, 400 without a target', async ctx => {
  assert.deepEqual(await call(ctx, 'POST', '/_sim/scan', { authkey: AUTHKEY, appkey: 'nope', phone: PHONE }), {
    status: 404,
    body: { status: 404, message: 'device not found' },
  })
  assert.equal((await call(ctx, 'POST', '/_sim/scan', { authkey: AUTHKEY, appkey: 'key-1', phone: PHONE })).status, 404)
  assert.equal((await call(ctx, 'POST', '/_sim/scan', { phone: PHONE })).status, 400)
  await ctx.h.transport.link('d1', { phone: FRIEND, code: '11223344' })
  const wrongPhone = await call(ctx, 'POST', '/_sim/scan', { authkey: AUTHKEY, appkey: 'key-1', phone: PHONE })
  assert.deepEqual(wrongPhone.status, 400)
})

test('POST /_sim/scan by appkey needs the authkey: 400 without it, 401 for an unknown one, 409 when the appkey names two devices', async ctx => {
  await ctx.h.transport.link('d1', {})
  assert.deepEqual(await call(ctx, 'POST', '/_sim/scan', { appkey: 'key-1', phone: PHONE }), {
    status: 400,
    body: { status: 400, message: 'authkey is required to find a device by appkey' },
  })
  assert.deepEqual(await call(ctx, 'POST', '/_sim/scan', { authkey: 'other', appkey: 'key-1', phone: PHONE }), {
    status: 401,
    body: { status: 401, message: 'unknown or expired authkey' },
  })
  assert.deepEqual(await call(ctx, 'POST', '/_sim/scan', { authkey: AUTHKEY, appkey: 'key-2', phone: PHONE }), {
    status: 409,
    body: { status: 409, message: '"key-2" names 2 devices of the account (by id, appkey or name): use the device id' },
  })
  assert.deepEqual(await call(ctx, 'POST', '/_sim/unlink', { authkey: 'other', appkey: 'key-1' }), {
    status: 401,
    body: { status: 401, message: 'unknown or expired authkey' },
  })
  assert.equal((await ctx.h.transport.status('d1')).state, 'linking', 'no refused scan linked the device')
  assert.equal((await call(ctx, 'POST', '/_sim/scan', { authkey: AUTHKEY, appkey: 'loja', phone: PHONE })).status, 200, 'by name')
})

test('POST /_sim/send delivers to the device and answers the id', async ctx => {
  await ctx.h.transport.link('d1', {})
  await call(ctx, 'POST', '/_sim/scan', { authkey: AUTHKEY, appkey: 'key-1', phone: PHONE })
  const res = await call(ctx, 'POST', '/_sim/send', { from: FRIEND, to: PHONE, type: 'text', text: 'hi' })
  assert.equal(res.status, 200)
  assert.match(res.body.id, /^3EB0[0-9A-F]{16}$/)
  const [message] = messages(ctx.h)
  assert.deepEqual([message.id, message.from, message.chat, message.content], [res.body.id, FRIEND, FRIEND, { kind: 'text', text: 'hi' }])
})

test('POST /_sim/send takes form bodies, with numbers and flags as strings', async ctx => {
  await ctx.h.transport.link('d1', {})
  await call(ctx, 'POST', '/_sim/scan', { authkey: AUTHKEY, appkey: 'key-1', phone: PHONE })
  const form = `from=${FRIEND}&to=%2B${PHONE}&type=location&latitude=-23.5&longitude=-46.6&text=Home`
  assert.equal((await call(ctx, 'POST', '/_sim/send', form, 'application/x-www-form-urlencoded')).status, 200)
  const voice = `from=${FRIEND}&to=${PHONE}&type=audio&mimetype=audio%2Fogg&voiceNote=true`
  assert.equal((await call(ctx, 'POST', '/_sim/send', voice, 'application/x-www-form-urlencoded')).status, 200)
  assert.deepEqual(
    messages(ctx.h).map(m => m.content),
    [
      { kind: 'location', latitude: -23.5, longitude: -46.6, name: 'Home' },
      { kind: 'audio', mimetype: 'audio/ogg', voiceNote: true },
    ],
  )
})

test('POST /_sim/send answers 400 {status, message} for bad input, never 500', async ctx => {
  const bad: [unknown, string?][] = [
    [{ from: FRIEND, to: PHONE, type: 'smoke' }],
    [{ from: FRIEND, to: PHONE, type: 'text' }],
    [{ from: 'abc', to: PHONE, type: 'text', text: 'x' }],
    [{ from: FRIEND, to: 'not-a-phone', type: 'text', text: 'x' }],
    [{ from: FRIEND, to: PHONE, type: 'location', latitude: 'north', longitude: 1 }],
    ['{"from": ', 'application/json'],
    ['[1, 2]', 'application/json'],
    ['"just a string"', 'application/json'],
    [''],
  ]
  for (const [body, type] of bad) {
    const res = await call(ctx, 'POST', '/_sim/send', body, type)
    assert.equal(res.status, 400, JSON.stringify(body))
    assert.equal(res.body.status, 400)
    assert.equal(typeof res.body.message, 'string')
  }
  const unknownTarget = await call(ctx, 'POST', '/_sim/send', { from: FRIEND, to: PHONE, type: 'reaction', target: '3EB0000000000000DEAD', emoji: '' })
  assert.equal(unknownTarget.status, 404)
})

test('GET /_sim/inbox/:phone lists what the phone received, oldest first', async ctx => {
  await ctx.h.transport.link('d1', {})
  await call(ctx, 'POST', '/_sim/scan', { authkey: AUTHKEY, appkey: 'key-1', phone: PHONE })
  const first = await ctx.h.transport.send('d1', FRIEND, { kind: 'text', text: 'one' })
  await ctx.h.transport.send('d1', FRIEND, { kind: 'reaction', target: { chat: FRIEND, id: first.id }, emoji: '👍' })
  const res = await call(ctx, 'GET', `/_sim/inbox/%2B${FRIEND}`)
  assert.equal(res.status, 200)
  assert.deepEqual(
    res.body.map(({ id, timestamp, ...rest }: { id: string; timestamp: number }) => rest),
    [
      { from: PHONE, type: 'text', text: 'one' },
      { from: PHONE, type: 'reaction', target: first.id, emoji: '👍' },
    ],
  )
  assert.deepEqual(await call(ctx, 'GET', '/_sim/inbox/5511000000009'), { status: 200, body: [] })
  assert.equal((await call(ctx, 'GET', '/_sim/inbox/nobody')).status, 400)
})

test('POST /_sim/groups creates a group, and GET /_sim/invite/:groupId answers its link', async ctx => {
  const created = await call(ctx, 'POST', '/_sim/groups', { creator: FRIEND, subject: 'Club', members: `${PHONE}-5511977770003` })
  assert.equal(created.status, 200)
  const { group, link } = created.body
  assert.deepEqual(
    group.participants.map((p: { phone: string }) => p.phone),
    [FRIEND, PHONE, '5511977770003'],
  )
  const invite = await call(ctx, 'GET', `/_sim/invite/${encodeURIComponent(group.id)}`)
  assert.deepEqual(invite.body, { status: 200, message: 'invite link', link, code: group.inviteCode })
  assert.equal(link, `https://chat.whatsapp.com/${group.inviteCode}`)
  assert.equal((await call(ctx, 'GET', `/_sim/invite/${group.id.split('@')[0]}`)).body.link, link)
  assert.deepEqual(await call(ctx, 'GET', '/_sim/invite/120363000000000000@g.us'), { status: 404, body: { status: 404, message: 'group not found' } })
})

test('POST /_sim/phones gives a phone a LID, and POST /_sim/unlink logs the device out', async ctx => {
  const registered = await call(ctx, 'POST', '/_sim/phones', { phone: FRIEND, lid: true, hidePhone: true })
  assert.match(registered.body.lid, /^\d{15}@lid$/)
  await ctx.h.transport.link('d1', {})
  await call(ctx, 'POST', '/_sim/scan', { authkey: AUTHKEY, appkey: 'key-1', phone: PHONE })
  await call(ctx, 'POST', '/_sim/send', { from: FRIEND, to: PHONE, type: 'text', text: 'x' })
  assert.equal(messages(ctx.h)[0].chat, registered.body.lid)
  assert.equal((await call(ctx, 'POST', '/_sim/unlink', { authkey: AUTHKEY, appkey: 'key-1' })).status, 200)
  assert.equal((await ctx.h.transport.status('d1')).state, 'logged-out')
  assert.equal((await call(ctx, 'POST', '/_sim/unlink', { authkey: AUTHKEY, appkey: 'key-1' })).status, 404)
})

test('the simulator parses bodies of its own routes only', async ctx => {
  const res = await call(ctx, 'POST', '/host', { a: 1 })
  assert.deepEqual(res.body, { parsed: null, raw: '{"a":1}' })
})

test.run()
