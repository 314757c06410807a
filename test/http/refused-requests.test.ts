import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../adapters/transport-memory/index.ts'
import type { Transport } from '../../src/ports/transport.ts'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'
import { POSTGRES, needing } from '../helpers/requires.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'
import { DEVICE_PHONE, FRIEND, assertError, assertOk, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'

/** A refused request changes nothing: what a request stores is stored only once it cannot be refused any more. */

const HOOK_A = 'https://hooks.example.com/a'
const HOOK_B = 'https://hooks.example.com/b'

type Ctx = { t?: TestGateway; g?: SendingGateway; failLinks: boolean; authkey: string }
const test = suite<Ctx>('refused requests change nothing')
test.after.each(async ctx => {
  await ctx.t?.stop()
  await ctx.g?.stop()
  ctx.t = ctx.g = undefined
})

/** A gateway on the simulated network whose transport fails every link while `ctx.failLinks` is set. */
async function start(ctx: Ctx): Promise<TestGateway> {
  const network = new MemoryNetwork()
  const inner = memoryTransport({ network })
  const transport = new Proxy(inner, {
    get(target, key) {
      if (key === 'link' && ctx.failLinks) return async () => Promise.reject(new Error('network down'))
      const value = Reflect.get(target, key)
      return typeof value === 'function' ? value.bind(target) : value
    },
  }) as Transport
  ctx.failLinks = false
  ctx.t = await startGateway({ network, transport })
  ctx.authkey = (await ctx.t.register()).authkey
  return ctx.t
}

const webhookOf = async (t: TestGateway, authkey: string, ref: string) =>
  (await t.post('/api/developer', { authkey, message: ref, checkDispositivo: 'true' })).body.dispositivo?.webhook

test('a refused add-device (409 Dispositivo já conectado.) keeps the stored webhook URL, by operation 4 and by operation 3', async ctx => {
  const t = await start(ctx)
  const { authkey } = ctx
  await t.linkedDevice(authkey, 'loja', '5511911110001', { webhook: HOOK_A })
  assertError(await t.post('/api/developer', { authkey, message: 'loja', conecteQR: 'true', webhook: HOOK_B }), 409, 'Dispositivo já conectado.')
  assert.is(await webhookOf(t, authkey, 'loja'), HOOK_A)
  assertError(await t.post('/api/v2/qrcode', { authkey, setAppkey: 'loja', webhook: HOOK_B }), 409, 'Dispositivo já conectado.')
  assert.is(await webhookOf(t, authkey, 'loja'), HOOK_A)
})

test('a re-add whose link fails keeps the webhook URL; one whose link starts stores the new one', async ctx => {
  const t = await start(ctx)
  const { authkey } = ctx
  assertOk(await t.post('/api/developer', { authkey, message: 'balcao', conecteQR: 'true', webhook: HOOK_A }))
  ctx.failLinks = true
  assertError(await t.post('/api/developer', { authkey, message: 'balcao', conecteQR: 'true', webhook: HOOK_B }), 404, 'Erro ao adicionar dispositivo.')
  assert.is(await webhookOf(t, authkey, 'balcao'), HOOK_A)
  ctx.failLinks = false
  assertOk(await t.post('/api/developer', { authkey, message: 'balcao', conecteQR: 'true', webhook: HOOK_B }))
  assert.is(await webhookOf(t, authkey, 'balcao'), HOOK_B)
  assertOk(await t.post('/api/v2/qrcode', { authkey, setAppkey: 'balcao', webhook: HOOK_A }))
  assert.is(await webhookOf(t, authkey, 'balcao'), HOOK_A, 'operation 3 too')
})

test('an add-device whose link fails leaves no device behind, by operation 4 and by operation 3', async ctx => {
  const t = await start(ctx)
  const { authkey } = ctx
  ctx.failLinks = true
  assertError(await t.post('/api/developer', { authkey, message: 'novo', conecteQR: 'true', webhook: HOOK_A }), 404, 'Erro ao adicionar dispositivo.')
  assertError(await t.post('/api/developer', { authkey, message: 'novo', checkDispositivo: 'true' }), 404, 'Nenhum dispositivo encontrado.')
  const refused = await t.post('/api/v2/qrcode', { authkey, setAppkey: 'outro' })
  assert.ok(refused.status >= 400, `operation 3 is refused: ${refused.text}`)
  assertError(await t.post('/api/developer', { authkey, message: 'outro', checkDispositivo: 'true' }), 404, 'Nenhum dispositivo encontrado.')
  assert.equal(await t.gateway.findDevices(authkey, 'novo'), [])

  ctx.failLinks = false
  const created = assertOk(await t.post('/api/developer', { authkey, message: 'novo', conecteQR: 'true' }))
  assert.match(created.appkey, /^[A-Za-z0-9_-]{24}$/, 'the name is free again: a new device, with its appkey in the answer')
})

test('a refused OTP send (the network fails) keeps the code sent before valid', async ctx => {
  const g = (ctx.g = await sendingGateway())
  assertOk(await g.send({ to: FRIEND, enviarOTP: 'true' }))
  const texts = () => g.network.inbox(FRIEND).flatMap(entry => (entry.type === 'text' ? [entry.text] : []))
  const code = /(\d{6})/.exec(texts().at(-1)!)![1]
  g.network.setFault(DEVICE_PHONE, 'fail')
  const failed = await g.send({ to: FRIEND, enviarOTP: 'true' })
  assert.ok(failed.status >= 400, `the second send fails: ${failed.text}`)
  g.network.setFault(DEVICE_PHONE, null)
  assert.is(texts().length, 1, 'the second code never reached the phone')
  assertOk(await g.send({ to: FRIEND, message: 'false', verificarOTP: code }))
})

test('a verification or deletion with its code or id left blank is refused in its own words, never sent as the text "false"', async ctx => {
  const g = (ctx.g = await sendingGateway())
  const texts = () => g.network.inbox(FRIEND).flatMap(entry => (entry.type === 'text' ? [entry.text] : []))
  const otp = await g.send({ to: FRIEND, message: 'false', verificarOTP: '' })
  assert.equal([otp.status, otp.body], [401, { status: 401, message: 'validation.required', valid: false }])
  assertError(await g.send({ to: FRIEND, message: 'false', deleteID: ' ' }), 401, 'validation.required')
  assert.equal(texts(), [], 'nothing reached the phone')
  assertOk(await g.send({ to: FRIEND, message: 'false' }))
  assert.equal(texts(), ['false'], 'a body with no such field still sends its text')
})

test('every operation: a required field missing, null, blank or of a wrong type is refused in the words of the spec (docs/api.md), and stores nothing', async ctx => {
  const storage = new RecordingStorage()
  const t = (ctx.t = await startGateway({ storage, rateLimit: false }))
  const authkey = (await t.register()).authkey
  await t.linkedDevice(authkey, 'loja', DEVICE_PHONE)
  const keys = { appkey: 'loja', authkey }
  const V401 = { status: 401, message: 'validation.required' }
  // Each operation: a body it takes, its distinguishing field(s) (of a wrong type they still select it), its answer to a bad field.
  const operations: [string, string, Record<string, unknown>, string[], Record<string, unknown>][] = [
    ['1', '/api/auth', { auth: 'registrar', nome: 'N', email: 'n@example.com', senha: 'senha-secreta', telefone: '5511999990000', plano: '1' }, ['auth'], V401],
    ['2', '/api/v2/ia', { authkey, device: 'loja', agent_name: 'Bia' }, [], { status: 400, message: 'validation.required' }],
    ['3', '/api/v2/qrcode', { authkey, setAppkey: 'nova', phone: FRIEND }, [], { status: 400, message: 'Parâmetros inválidos.' }],
    ['4', '/api/developer', { authkey, message: 'nova', conecteQR: 'true' }, ['conecteQR'], V401],
    ['5', '/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' }, ['checkDispositivo'], V401],
    ['6', '/api/developer', { authkey, message: 'loja', apagarDispositivo: 'true' }, ['apagarDispositivo'], V401],
    ['7', '/api/developer', { ...keys, message: 'false', to: 'loja', GerenciarLinks: 'excluir' }, ['GerenciarLinks'], V401],
    ['8', '/api/create-message', { ...keys, to: FRIEND, message: 'oi' }, [], V401],
    ['9', '/api/create-message', { ...keys, to: FRIEND, file: 'aGVsbG8=' }, ['file'], V401],
    ['10', '/api/create-message', { ...keys, to: FRIEND, message: FRIEND, contact: 'Ana' }, ['contact'], V401],
    ['11', '/api/create-message', { ...keys, to: FRIEND, latitude: '-23.5', longitude: '-46.6' }, ['latitude', 'longitude'], V401],
    ['12', '/api/create-message', { ...keys, to: FRIEND, message: '👍', id: 'x', reactionMessage: 'true' }, ['reactionMessage'], V401],
    ['13', '/api/create-message', { ...keys, to: FRIEND, message: 'false', deleteID: 'x' }, ['deleteID'], V401],
    ['14', '/api/create-message', { ...keys, to: FRIEND, markRead: 'x' }, ['markRead'], V401],
    ['15', '/api/create-message', { ...keys, to: FRIEND, message: 'm', buttons: [{ type: 'replyButton', displaytext: 'Sim' }] }, ['buttons'], V401],
    [
      '16',
      '/api/create-message',
      {
        ...keys,
        to: FRIEND,
        message: 'm',
        cards: [{ image_url: 'https://example.com/a.png', title: 'T', buttons: [{ type: 'quickReplyButton', displaytext: 'Q', id: 'q' }] }],
      },
      ['cards'],
      V401,
    ],
    ['17', '/api/create-message', { ...keys, listaAgendamento: 'true', message: 'false' }, ['listaAgendamento'], V401],
    ['18', '/api/create-message', { ...keys, to: FRIEND, message: 'false', verificarOTP: '123456' }, ['verificarOTP'], { ...V401, valid: false }],
    ['OTP', '/api/create-message', { ...keys, to: FRIEND, enviarOTP: 'true' }, ['enviarOTP'], V401],
    ['19', '/api/settings', { ...keys, to: 'todos', message: 'false', deleteConversaFluxo: 'true' }, ['deleteConversaFluxo'], V401],
    ['20', '/api/settings', { ...keys, type: 'chat', message: 'loja', statusWebhook: 'true' }, ['statusWebhook'], V401],
    ['21', '/api/groups', { ...keys, message: 'false', infoConvite: '120363000000000001@g.us' }, ['infoConvite'], V401],
    ['22', '/api/groups', { ...keys, message: 'Grupo', usuarios: FRIEND, criarGrupo: 'true' }, ['criarGrupo'], V401],
    ['23', '/api/groups', { ...keys, message: 'false', entrarConvite: 'https://chat.whatsapp.com/AAAAAAAAAAAAAAAAAAAAAA' }, ['entrarConvite'], V401],
  ]
  const stored = () => JSON.stringify([...storage.entries].filter(([key]) => !key.startsWith('instance:') && key !== 'cache-epoch'))
  for (const [name, path, body, distinguishing, refused] of operations) {
    for (const field of Object.keys(body)) {
      // Operation 3 requires only its authkey (any bad one: 401 Authkey inválida ou não encontrada.); a distinguishing field left out selects another operation.
      const own = name === '3' && field === 'authkey' ? { status: 401, message: 'Authkey inválida ou não encontrada.' } : refused
      const values = distinguishing.includes(field)
        ? [[], {}]
        : name === '3' && field !== 'authkey'
          ? [true, [], {}]
          : [undefined, null, '', ' \t', true, [], {}]
      for (const bad of values) {
        const before = stored()
        const answer = await t.post(path, { ...body, [field]: bad })
        assert.equal([answer.status, answer.body], [own.status, own], `operation ${name}, ${field}: ${JSON.stringify(bad)}`)
        assert.is(stored(), before, `operation ${name}, ${field}: ${JSON.stringify(bad)} stored something`)
      }
    }
  }
})

needing(
  test,
  POSTGRES,
  'device references on a PostgreSQL store',
)(
  'a device reference no device id can be (a NUL, which PostgreSQL refuses in a key) is 404 Nenhum dispositivo encontrado., not 503, on a PostgreSQL store',
  async ctx => {
    const storage = await storageFromUrl(POSTGRES.value!, { namespace: `zapgate-refused-${process.pid}-${Date.now()}` })
    const t = (ctx.t = await startGateway({ storage, rateLimit: false }))
    try {
      const authkey = (await t.register()).authkey
      await t.addDevice(authkey, 'loja')
      for (const ref of ['\u0000', 'loja\u0000']) {
        const requests: [string, Record<string, unknown>][] = [
          ['/api/v2/ia', { authkey, device: ref, agent_name: 'Bia' }],
          ['/api/developer', { authkey, message: ref, checkDispositivo: 'true' }],
          ['/api/developer', { authkey, message: ref, apagarDispositivo: 'true' }],
          ['/api/developer', { authkey, appkey: 'loja', message: 'false', to: ref, GerenciarLinks: 'excluir' }],
          ['/api/settings', { authkey, appkey: 'loja', type: 'chat', message: ref, statusWebhook: 'true' }],
        ]
        for (const [path, body] of requests) assertError(await t.post(path, body), 404, 'Nenhum dispositivo encontrado.')
      }
      assertOk(await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' }))
    } finally {
      // The shared database keeps nothing of this test (before, ten rows a run stayed in the keyv table).
      await t.stop()
      ctx.t = undefined
      for await (const [name] of storage.list('')) await storage.delete(name)
      await storage.close?.()
    }
  },
)

test.run()
