import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'
import { sendRaw } from '../fuzz/harness.ts'

/** Counterexamples found by the fuzz suites (test/fuzz), kept so that they stay fixed. */
type Ctx = { t: TestGateway; authkey: string; appkey: string }
const test = suite<Ctx>('fuzzing counterexamples')

test.before(async ctx => {
  ctx.t = await startGateway()
  ctx.authkey = (await ctx.t.register()).authkey
  ctx.appkey = (await ctx.t.linkedDevice(ctx.authkey, 'loja', '5511999990001')).appkey
})
test.after(ctx => ctx.t.stop())

const json = (body: string) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body })

test('a field holding an object that cannot be turned into text ({"toString": "x"}) is 401 validation.required, not 500', async ({ t, authkey }) => {
  const markRead = { appkey: 'loja', authkey, to: '5511988880002', markRead: 'true', idMessagem: 'x' }
  const text = { appkey: 'loja', authkey, to: '5511988880002', message: 'olá' }
  for (const [base, field] of [
    [markRead, 'appkey'],
    [markRead, 'to'],
    [markRead, 'markRead'],
    [text, 'message'],
  ] as const) {
    const body = { ...base, [field]: { toString: 'x' } }
    const answer = await request(`${t.url}/api/create-message`, json(JSON.stringify(body)))
    assert.equal(answer.body, { status: 401, message: 'validation.required' }, field)
  }
})

test('a multipart field nested into an object without prototype (message[a]) is 401 validation.required, not 500', async ({ t, authkey }) => {
  const form = new FormData()
  form.append('appkey', 'loja')
  form.append('authkey', authkey)
  form.append('to', '5511988880002')
  form.append('message[a]', '1')
  const answer = await request(`${t.url}/api/create-message`, { method: 'POST', body: form })
  assert.equal(answer.body, { status: 401, message: 'validation.required' })
})

test('a body whose Content-Encoding does not match its bytes is 400, not 500', async ({ t }) => {
  for (const encoding of ['gzip', 'deflate', 'br']) {
    const answer = await sendRaw(`${t.url}/api/auth`, 'a=1', { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': encoding })
    assert.is(answer.status, 400, encoding)
    assert.is(answer.body.status, 400)
  }
})

test('a multipart body cut short inside a file part is 400 and the process keeps serving', async ({ t, authkey }) => {
  // Busboy errors on the file part's own stream; without a listener that error ended the process.
  const part = '--zapgate\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\nabc'
  for (const cut of [part, `${part}\r\n`, `${part}\r\n--zapgate`]) {
    const answer = await sendRaw(`${t.url}/api/create-message`, cut, { 'content-type': 'multipart/form-data; boundary=zapgate' })
    assert.equal(answer.body, { status: 400, message: 'Corpo da requisição inválido.' })
  }
  const after = await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })
  assert.is(after.status, 200)
})

test('GET /docs/<a name of Object.prototype> is 404, not 500', async ({ t }) => {
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    const answer = await request(`${t.url}/docs/${name}`)
    assert.is(answer.status, 404, name)
  }
})

test('an authkey nested 50,000 arrays deep is refused as an invalid key, not 500 (the rate limiter named its counter by JSON text)', async ({ t }) => {
  const deep = '['.repeat(50_000) + ']'.repeat(50_000)
  const expected: [string, number, string][] = [
    ['/api/create-message', 401, 'validation.required'],
    ['/api/v2/qrcode', 401, 'Authkey inválida ou não encontrada.'],
    ['/api/v2/ia', 400, 'validation.required'],
  ]
  for (const [path, status, message] of expected) {
    const answer = await request(
      `${t.url}${path}`,
      json(`{"authkey":${deep},"appkey":"loja","device":"loja","agent_name":"a","to":"5511988880002","message":"x"}`),
    )
    assert.equal([answer.status, answer.body], [status, { status, message }], path)
  }
})

test.run()
