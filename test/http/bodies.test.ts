import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { gatewayWithDevice, startGateway, type TestGateway } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'

type Ctx = { t: TestGateway; authkey: string }
const bodies = suite<Ctx>('request bodies')
bodies.before(async ctx => {
  Object.assign(ctx, await gatewayWithDevice({ bodyLimit: '64kb' }))
})
bodies.after(ctx => ctx.t.stop())

bodies('JSON, urlencoded and multipart bodies give the same answers', async ({ t, authkey }) => {
  const cases = [
    { authkey, message: 'loja', checkDispositivo: 'true' },
    { authkey, message: 'ghost', checkDispositivo: 'true' },
    { authkey, message: 'loja' },
    { authkey: 'nope', message: 'loja', apagarDispositivo: 'true' },
  ]
  for (const body of cases) {
    const [json, form, multipart] = await Promise.all((['json', 'form', 'multipart'] as const).map(enc => t.post('/api/developer', body, enc)))
    assert.equal(form.body, json.body, `form vs json for ${JSON.stringify(body)}`)
    assert.equal(multipart.body, json.body, `multipart vs json for ${JSON.stringify(body)}`)
    assert.is(form.status, json.status)
    assert.is(multipart.status, json.status)
  }
})

bodies('a name sent twice, plain and bracketed or plain twice, answers the same in urlencoded and multipart bodies', async ({ t, authkey }) => {
  // Ordered [name, value] pairs, sent once as a urlencoded form (qs reads them) and once as multipart.
  const send = (pairs: [string, string][], enc: 'form' | 'multipart') => {
    const all: [string, string][] = [['authkey', authkey], ['checkDispositivo', 'true'], ...pairs]
    if (enc === 'form') {
      const headers = { 'content-type': 'application/x-www-form-urlencoded' }
      return request(`${t.url}/api/developer`, {
        method: 'POST',
        headers,
        body: all.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'),
      })
    }
    const form = new FormData()
    for (const [name, value] of all) form.append(name, value)
    return request(`${t.url}/api/developer`, { method: 'POST', body: form })
  }
  const cases: [string, string][][] = [
    [['message', 'loja']],
    [
      ['message[x]', '1'],
      ['message', 'loja'],
    ],
    [
      ['message', 'loja'],
      ['message[x]', '1'],
    ],
    [
      ['message', 'loja'],
      ['message', 'loja'],
    ],
    [
      ['message[]', 'loja'],
      ['message', 'loja'],
    ],
    [
      ['message', 'loja'],
      ['message[]', 'loja'],
    ],
    [['message[0]', 'loja']],
  ]
  for (const pairs of cases) {
    const [form, multipart] = await Promise.all([send(pairs, 'form'), send(pairs, 'multipart')])
    assert.equal(multipart.body, form.body, `multipart vs urlencoded for ${JSON.stringify(pairs)}`)
    assert.is(multipart.status, form.status)
  }
  assert.equal((await send(cases[1], 'multipart')).body, { status: 401, message: 'validation.required' }, 'message is a list of two values: not a text')
})

bodies("a browser form's file input left empty (a part with no file name and no bytes) is no file: the text is sent", async ({ t, authkey }) => {
  const device = await t.linkedDevice(authkey, 'formulario', '5511944443333')
  const boundary = '----zapgateEmptyFile'
  const part = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
  const emptyFile = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename=""\r\nContent-Type: application/octet-stream\r\n\r\n\r\n`
  const body =
    part('appkey', device.appkey) + part('authkey', authkey) + part('to', '5511955556666') + part('message', 'Olá') + emptyFile + `--${boundary}--\r\n`
  const answer = await fetch(`${t.url}/api/create-message`, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body })
  const json = (await answer.json()) as { status: number; message: string }
  assert.is(json.status, 200, JSON.stringify(json))
  assert.is(json.message, 'Mensagem de texto enviada.')
  assert.is((t.network.inbox('5511955556666').at(-1) as { text?: string }).text, 'Olá')
})

bodies('registration works from an urlencoded and a multipart body', async ({ t }) => {
  for (const enc of ['form', 'multipart'] as const) {
    const answer = await t.post(
      '/api/auth',
      { auth: 'registrar', nome: 'Caio', email: `caio-${enc}@example.com`, senha: 'segredo1', telefone: '5511912345678', plano: '1' },
      enc,
    )
    assert.is(answer.status, 200, answer.text)
    assert.is(answer.body.data.email, `caio-${enc}@example.com`)
  }
})

bodies('malformed JSON is 400 JSON inválido., never 500', async ({ t }) => {
  for (const raw of ['{bad', '{"a":', '[1,2', 'nul', '{"a":1}}']) {
    const answer = await request(`${t.url}/api/developer`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw })
    assert.is(answer.status, 400, raw)
    assert.equal(answer.body, { status: 400, message: 'JSON inválido.' })
  }
})

bodies('a JSON body that is not an object is 400', async ({ t }) => {
  for (const raw of ['[]', '"texto"', '42', 'null', 'true']) {
    const answer = await request(`${t.url}/api/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw })
    assert.is(answer.status, 400, raw)
    assert.is(answer.body.status, 400)
  }
})

bodies('a form of more than 1,000 fields is 413, never read with its tail dropped (the authkey after 1,000 fillers was lost: 401)', async ({ t, authkey }) => {
  const form = (fillers: number) =>
    [...Array.from({ length: fillers }, (_, i) => `f${i}=1`), `authkey=${authkey}`, 'message=loja', 'checkDispositivo=true'].join('&')
  const post = (body: string) => request(`${t.url}/api/developer`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })
  const over = await post(form(1000))
  assert.is(over.status, 413, over.text)
  assert.equal(over.body, { status: 413, message: 'Corpo da requisição grande demais.' })
  const within = await post(form(997)) // 1,000 fields in all
  assert.is(within.status, 200, within.text)
  const junk = await post(`junk[1500]=a&${form(0)}`) // an index past the lists' 1,000 entries: a key, as qs has it, harmless in a field the API ignores
  assert.is(junk.status, 200, junk.text)
  assert.type(within.body.dispositivo, 'object', 'the device was found: every field read')
})

bodies('a body over the limit is 413 in every encoding', async ({ t, authkey }) => {
  const big = 'x'.repeat(70 * 1024)
  for (const enc of ['json', 'form', 'multipart'] as const) {
    const answer = await t.post('/api/developer', { authkey, message: big, checkDispositivo: 'true' }, enc)
    assert.is(answer.status, 413, enc)
    assert.is(answer.body.status, 413)
  }
})

bodies('an unsupported content type is 415; an empty body is a missing field', async ({ t }) => {
  const text = await request(`${t.url}/api/auth`, { method: 'POST', headers: { 'content-type': 'text/csv' }, body: 'a,b' })
  assert.is(text.status, 415)
  assert.is(text.body.status, 415)
  const empty = await request(`${t.url}/api/auth`, { method: 'POST' })
  assert.equal(empty.body, { status: 401, message: 'validation.required' })
})

bodies('flags accept true/"true"/"1" and prototype keys do nothing', async ({ t, authkey }) => {
  for (const flag of [true, 'true', '1', 1, 'TRUE'])
    assert.is((await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: flag })).status, 200, String(flag))
  const post = (body: string) => request(`${t.url}/api/developer`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  // A __proto__ key is dropped like any unknown field (never merged, never a 400): the rest of the body counts.
  const poisoned = await post(`{"__proto__":{"polluted":1,"checkDispositivo":"true"},"authkey":"${authkey}","message":"loja","checkDispositivo":"true"}`)
  assert.is(poisoned.status, 200, poisoned.text)
  const onlyPoison = await post(`{"__proto__":{"checkDispositivo":"true"},"authkey":"${authkey}","message":"loja"}`)
  assert.equal(onlyPoison.body, { status: 401, message: 'validation.required' }, 'the fields under __proto__ are not read')
  const constructorKey = await post(`{"constructor":{"prototype":{"polluted":1}},"authkey":"${authkey}","message":"loja"}`)
  assert.equal(constructorKey.body, { status: 401, message: 'validation.required' })
  const formPoison = await t.post('/api/developer', { __proto__x: 1, authkey, message: 'loja', 'constructor[prototype][polluted]': 1 }, 'form')
  assert.is(formPoison.status, 401)
  assert.is(({} as Record<string, unknown>).polluted, undefined)
})

bodies(
  'a JSON or urlencoded body in ISO-8859-1 (its charset) is read as such; a charset the gateway cannot read is 415, never read as UTF-8',
  async ({ t }) => {
    const nome = 'João Ação'
    const register = (email: string) => ({ auth: 'registrar', nome, email, senha: 'senha-secreta', telefone: '5511999990000', plano: '1' })
    const latin1 = (body: string, type: string) =>
      request(`${t.url}/api/auth`, { method: 'POST', headers: { 'content-type': `${type}; charset=ISO-8859-1` }, body: Buffer.from(body, 'latin1') })
    const json = await latin1(JSON.stringify(register('latin1-json@example.com')), 'application/json')
    assert.is(json.body.data?.nome, nome, json.text)
    for (const escape of [true, false]) {
      // Bytes percent-escaped (as Apache HttpClient's UrlEncodedFormEntity sends a form) or as they are.
      const fields = Object.entries(register(`latin1-form-${escape}@example.com`))
      const text = (v: string) => (escape ? [...Buffer.from(v, 'latin1')].map(b => `%${b.toString(16)}`).join('') : v)
      const form = await latin1(fields.map(([k, v]) => `${k}=${text(v)}`).join('&'), 'application/x-www-form-urlencoded')
      assert.is(form.body.data?.nome, nome, form.text)
    }
    for (const charset of ['utf-16', 'bogus']) {
      const answer = await request(`${t.url}/api/auth`, {
        method: 'POST',
        headers: { 'content-type': `application/json; charset=${charset}` },
        body: JSON.stringify(register(`${charset}@example.com`)),
      })
      assert.equal([answer.status, answer.body], [415, { status: 415, message: 'Tipo de conteúdo não suportado.' }], charset)
    }
  },
)

bodies('GET on an operation path is 405, not a crash', async ({ t }) => {
  const answer = await request(`${t.url}/api/auth`)
  assert.is(answer.status, 405)
})

bodies.run()

const always200 = suite('httpStatus: always200')

always200('answers HTTP 200 with the real status in the body', async () => {
  const t = await startGateway({ httpStatus: 'always200' })
  try {
    const missing = await t.post('/api/auth', {})
    assert.is(missing.status, 200)
    assert.equal(missing.body, { status: 401, message: 'validation.required' })
    const bad = await request(`${t.url}/api/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' })
    assert.is(bad.status, 200)
    assert.is(bad.body.status, 400)
  } finally {
    await t.stop()
  }
})

always200.run()
