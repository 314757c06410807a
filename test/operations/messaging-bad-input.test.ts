import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { request } from '../helpers/http.ts'
import { DEVICE_PHONE, FRIEND, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'

const test = suite<{ g: SendingGateway; bodies: [string, Record<string, unknown>][] }>('messaging operations: bad input never answers 500')

test.before(async ctx => {
  // Thousands of requests of one account in a few seconds: over the per-account limit, which is not under test here.
  ctx.g = await sendingGateway({ rateLimit: false })
  const received = await ctx.g.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'oi' })
  const to = FRIEND
  const card = { image_url: 'https://example.com/a.png', title: 'A', buttons: [{ type: 'quickReplyButton', displaytext: 'Q', id: 'q' }] }
  ctx.bodies = [
    ['/api/create-message', { to, message: 'x', agendamento: '2030-01-01 10:00:00' }],
    ['/api/create-message', { to, file: 'AAAA', message: 'a.png', descricao: 'c', format: 'png' }],
    ['/api/create-message', { to, contact: 'Ana', message: FRIEND }],
    ['/api/create-message', { to, latitude: '1', longitude: '2', message: 'x' }],
    ['/api/create-message', { to, reactionMessage: 'true', message: '👍', id: received }],
    ['/api/create-message', { to, message: 'false', deleteID: received }],
    ['/api/create-message', { to, markRead: 'true', idMessagem: received }],
    [
      '/api/create-message',
      { to, message: 'x', buttons: [{ type: 'urlButton', displaytext: 'ok', action: 'https://e.com' }], header_title: 'h', footer_text: 'f' },
    ],
    ['/api/create-message', { to, message: 'x', cards: [card], footer_text: 'f' }],
    ['/api/create-message', { listaAgendamento: 'true', message: 'false' }],
    ['/api/create-message', { to, message: 'false', verificarOTP: '123456' }],
    ['/api/create-message', { to, enviarOTP: 'true', message: '{code}' }],
    ['/api/groups', { message: 'false', infoConvite: '120363000000000001@g.us' }],
    ['/api/groups', { message: 'G', usuarios: FRIEND, criarGrupo: 'true' }],
    ['/api/groups', { message: 'false', entrarConvite: 'https://chat.whatsapp.com/AAAAAAAAAAAAAAAAAAAAAA' }],
  ]
})
test.after(async ctx => {
  await ctx.g.stop()
})

const weird: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1e308,
  [],
  {},
  [1, 'a', null],
  { type: { nested: true } },
  [{ type: 'replyButton', displaytext: { a: 1 } }],
  [{ image_url: ['x'], title: 5, buttons: 'nope' }],
  '',
  ' ',
  '\u0000\u0001',
  'x'.repeat(70_000),
  '{"a":',
  '[{"type":"replyButton"}]',
  '🙂'.repeat(40),
  '9'.repeat(400),
  'data:;base64,====',
  'http://',
  'https://chat.whatsapp.com/',
  '2030-02-30 25:61:61',
]

test('replacing any field of any messaging operation with odd values never answers 500', async ({ g, bodies }) => {
  let requests = 0
  for (const [path, body] of bodies) {
    const full = { appkey: g.appkey, authkey: g.authkey, ...body }
    for (const field of Object.keys(full)) {
      for (const value of weird) {
        const answer = await g.t.post(path, { ...full, [field]: value })
        requests++
        assert.ok(answer.status < 500, `${path} ${field}=${JSON.stringify(value)?.slice(0, 40)}: ${answer.text}`)
        assert.equal(typeof answer.body?.message, 'string')
      }
    }
  }
  assert.ok(requests > 1000)
})

test('odd nested form and multipart field names never answer 500', async ({ g }) => {
  const base = `appkey=${encodeURIComponent(g.appkey)}&authkey=${encodeURIComponent(g.authkey)}&to=${FRIEND}&message=x`
  const forms = [
    'buttons[0][type][x]=1',
    'buttons[__proto__][polluted]=1',
    'cards[constructor][prototype][x]=1',
    'buttons[999999]=1',
    'buttons[0]=[',
    'cards[0][buttons][0][type]=quickReplyButton&cards[0][buttons][0][displaytext]=a',
    'buttons=' + encodeURIComponent('{"0":{"type":"replyButton","displaytext":"a"}}'),
  ]
  for (const form of forms) {
    const answer = await request(`${g.t.url}/api/create-message`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `${base}&${form}`,
    })
    assert.ok(answer.status < 500, `${form}: ${answer.text}`)
  }
  const multipart = new FormData()
  for (const [k, v] of Object.entries({
    appkey: g.appkey,
    authkey: g.authkey,
    to: FRIEND,
    message: 'x',
    'buttons[__proto__][a]': '1',
    'buttons[0][type]': 'replyButton',
    'buttons[0][displaytext]': 'ok',
    'buttons[0][x][y][z][w][v][u]': 'deep',
  })) {
    multipart.append(k, v)
  }
  const answer = await request(`${g.t.url}/api/create-message`, { method: 'POST', body: multipart })
  assert.equal(answer.status, 200, answer.text)
  assert.equal(({} as Record<string, unknown>).a, undefined, 'no prototype pollution')
})

test.run()
