import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { operationTable } from '../../src/operations/table.ts'
import type { PathEntry } from '../../src/operations/operation.ts'
import type { Answer } from '../helpers/http.ts'
import { PNG } from '../helpers/samples.ts'
import { FRIEND, OTHER } from '../helpers/messaging.ts'
import { assertNothingOfAChanged, snapshot, tenancyWorld, type TenancyWorld } from '../helpers/tenancy.ts'

/**
 * The tenant isolation matrix: for every operation, account B using A's device names, ids and
 * appkeys, A's group, A's message ids, A's scheduled message or A's OTP recipient is refused, and
 * nothing of A's changes: A's raw store records stay byte-identical (B's own new records are
 * allowed), no simulated phone receives anything, A's device stays linked.
 */
const test = suite<{ world: TenancyWorld }>('tenant isolation: every operation, account B against account A')

test.before(async ctx => {
  ctx.world = await tenancyWorld()
})
test.after(ctx => ctx.world.t.stop())

/** One request of B and the answer it must get. */
interface Attack {
  path: string
  body: Record<string, unknown>
  status: number
  message?: string
  /** Further checks of the answer (e.g. B got a device of its own). */
  check?: (answer: Answer, world: TenancyWorld) => void
}

/** A row of the matrix: the operations it covers and B's requests against them. */
interface Row {
  operations: string[]
  what: string
  attacks(world: TenancyWorld): Attack[]
}

const NOT_FOUND = 'Nenhum dispositivo encontrado.'
const CARD = { image_url: 'https://files.example.com/a.png', title: 'Pizza', buttons: [{ type: 'quickReplyButton', displaytext: 'Quero', id: 'p' }] }

/** The body of each operation that takes a device key, without the keys. */
function deviceBodies({ a }: TenancyWorld): [string, string, Record<string, unknown>, Record<string, unknown>?][] {
  return [
    ['sendText', '/api/create-message', { to: FRIEND, message: 'intruso' }],
    ['sendMedia', '/api/create-message', { to: FRIEND, file: PNG.toString('base64') }],
    ['sendContact', '/api/create-message', { to: FRIEND, contact: 'Ana', message: OTHER }],
    ['sendLocation', '/api/create-message', { to: FRIEND, latitude: '-23.5', longitude: '-46.6' }],
    ['reactToMessage', '/api/create-message', { to: FRIEND, reactionMessage: 'true', message: '👍', id: a.sentId }],
    ['deleteMessage', '/api/create-message', { to: FRIEND, message: 'false', deleteID: a.sentId }],
    ['markMessageRead', '/api/create-message', { to: FRIEND, markRead: a.receivedId }],
    ['sendButtons', '/api/create-message', { to: FRIEND, message: 'x', buttons: [{ type: 'replyButton', displaytext: 'Sim' }] }],
    ['sendCarousel', '/api/create-message', { to: FRIEND, message: 'x', cards: [CARD] }],
    ['listSchedules', '/api/create-message', { listaAgendamento: 'true', message: 'false' }],
    ['sendOtp', '/api/create-message', { to: OTHER, enviarOTP: 'true' }],
    ['verifyOtp', '/api/create-message', { to: OTHER, message: 'false', verificarOTP: '123456' }, { valid: false }],
    ['deleteFlowConversations', '/api/settings', { to: 'todos', message: 'false', deleteConversaFluxo: 'true' }],
    ['switchWebhook', '/api/settings', { type: 'chat', message: a.deviceId, statusWebhook: 'false' }],
    ['groupInfo', '/api/groups', { message: 'false', infoConvite: a.groupId }],
    ['createGroup', '/api/groups', { message: 'Grupo B', usuarios: FRIEND, criarGrupo: 'true' }],
    ['joinGroup', '/api/groups', { message: 'false', entrarConvite: 'https://chat.whatsapp.com/AAAAAAAAAAAAAAAAAAAAAA' }],
  ]
}

/** B's own device is a new device, never one of A's. */
const ownDevice = (answer: Answer, { a }: TenancyWorld) => assert.ok(![a.deviceId, a.randomDeviceId].includes(answer.body.id), 'B got one of A’s devices')

const rows: Row[] = [
  {
    operations: ['registerUser'],
    what: "registering A's e-mail again, in any case or spacing",
    attacks: ({ a }) =>
      [a.email, a.email.toUpperCase(), ` ${a.email} `].map(email => ({
        path: '/api/auth',
        body: { auth: 'registrar', nome: 'Intruso', email, senha: 'outra-senha', telefone: '5511900000000', plano: '1' },
        status: 409,
        message: 'Usuario ja registrado com este e-mail.',
      })),
  },
  {
    operations: ['createAgent', 'deviceStatus', 'deleteDevice', 'deleteShareLink'],
    what: "B's authkey with A's device names, ids and appkeys",
    attacks: ({ b, refsA }) =>
      refsA.flatMap(ref => [
        { path: '/api/v2/ia', body: { authkey: b.authkey, device: ref, agent_name: 'Intruso' }, status: 404, message: NOT_FOUND },
        { path: '/api/developer', body: { authkey: b.authkey, message: ref, checkDispositivo: 'true' }, status: 404, message: NOT_FOUND },
        {
          path: '/api/developer',
          body: { authkey: b.authkey, message: ref, apagarDispositivo: 'true', apagarAppkey: 'true' },
          status: 404,
          message: NOT_FOUND,
        },
        {
          path: '/api/developer',
          body: { authkey: b.authkey, appkey: ref, message: 'false', to: ref, GerenciarLinks: 'excluir' },
          status: 404,
          message: NOT_FOUND,
        },
        {
          path: '/api/developer',
          body: { authkey: b.authkey, appkey: b.appkey, message: 'false', to: ref, GerenciarLinks: 'excluir' },
          status: 404,
          message: NOT_FOUND,
        },
      ]),
  },
  ...[
    'sendText',
    'sendMedia',
    'sendContact',
    'sendLocation',
    'reactToMessage',
    'deleteMessage',
    'markMessageRead',
    'sendButtons',
    'sendCarousel',
    'listSchedules',
    'sendOtp',
    'verifyOtp',
    'deleteFlowConversations',
    'switchWebhook',
    'groupInfo',
    'createGroup',
    'joinGroup',
  ].map((name): Row => ({
    operations: [name],
    what: `${name} with B's authkey and A's device names, ids and appkeys as appkey`,
    attacks: world => {
      const [, path, body, extra] = deviceBodies(world).find(([operation]) => operation === name)!
      return world.refsA.map(ref => ({
        path,
        body: { ...body, appkey: ref, authkey: world.b.authkey },
        status: 404,
        message: NOT_FOUND,
        ...(extra ? { check: answer => assert.equal(answer.body.valid, false) } : {}),
      }))
    },
  })),
  {
    operations: ['sendText', 'groupInfo'],
    what: "B's own device aimed at A's group",
    attacks: ({ a, b }) => [
      { path: '/api/create-message', body: { appkey: b.appkey, authkey: b.authkey, to: a.groupId, message: 'intruso' }, status: 404 },
      {
        path: '/api/groups',
        body: { appkey: b.appkey, authkey: b.authkey, message: 'false', infoConvite: a.groupId },
        status: 404,
        message: 'Grupo não encontrado.',
      },
    ],
  },
  {
    operations: ['reactToMessage', 'deleteMessage', 'markMessageRead'],
    what: "B's own device aimed at A's sent and received message ids",
    attacks: ({ a, b }) =>
      [a.sentId, a.receivedId].flatMap(id => [
        {
          path: '/api/create-message',
          body: { appkey: b.appkey, authkey: b.authkey, to: FRIEND, reactionMessage: 'true', message: '👍', id },
          status: 404,
          message: 'Mensagem não encontrada nesta conversa.',
        },
        {
          path: '/api/create-message',
          body: { appkey: b.appkey, authkey: b.authkey, to: FRIEND, message: 'false', deleteID: id },
          status: 404,
          message: 'Mensagem não encontrada nesta conversa.',
        },
        {
          path: '/api/create-message',
          body: { appkey: b.appkey, authkey: b.authkey, to: FRIEND, markRead: id },
          status: 404,
          message: 'Mensagem não encontrada nesta conversa.',
        },
      ]),
  },
  {
    operations: ['listSchedules', 'verifyOtp', 'deleteFlowConversations', 'switchWebhook'],
    what: "B's own device: A's scheduled message, OTP, flow conversations and device stay out of reach",
    attacks: ({ a, b }) => {
      const keys = { appkey: b.appkey, authkey: b.authkey }
      return [
        {
          path: '/api/create-message',
          body: { ...keys, listaAgendamento: 'true', message: 'false' },
          status: 200,
          check: answer => assert.deepEqual(answer.body.data, []),
        },
        ...['000000', '123456', '999999'].map(code => ({
          path: '/api/create-message',
          body: { ...keys, to: OTHER, message: 'false', verificarOTP: code },
          status: 401,
          message: 'OTP inválido ou expirado.',
        })),
        {
          path: '/api/settings',
          body: { ...keys, to: 'todos', message: 'false', deleteConversaFluxo: 'true' },
          status: 200,
          check: answer => assert.equal(answer.body.excluidas, 0),
        },
        {
          path: '/api/settings',
          body: { ...keys, to: FRIEND, message: 'false', deleteConversaFluxo: 'true' },
          status: 200,
          check: answer => assert.equal(answer.body.excluidas, 0),
        },
        ...[a.deviceId, a.name, a.randomDeviceId].map(ref => ({
          path: '/api/settings',
          body: { ...keys, type: 'grupo', message: ref, statusWebhook: 'true' },
          status: 404,
          message: NOT_FOUND,
        })),
      ]
    },
  },
  {
    // Last: afterwards B owns devices named like A's, so B's appkey `loja-a` is B's own device.
    operations: ['generateQrCode', 'addDevice'],
    what: "B creating devices named after A's names, ids and appkeys gets devices of its own",
    attacks: ({ b, refsA }) =>
      refsA.flatMap(ref => [
        { path: '/api/v2/qrcode', body: { authkey: b.authkey, setAppkey: ref }, status: 200, check: ownDevice },
        { path: '/api/v2/qrcode', body: { authkey: b.authkey, setAppkey: ref, phone: '5511933330003' }, status: 200, check: ownDevice },
        { path: '/api/developer', body: { authkey: b.authkey, message: ref, conecteQR: 'true' }, status: 200, check: ownDevice },
      ]),
  },
]

for (const row of rows) {
  test(`${row.operations.join(', ')}: ${row.what} is refused and nothing of A's changes`, async ({ world }) => {
    const before = await snapshot(world)
    for (const attack of row.attacks(world)) {
      const answer = await world.t.post(attack.path, attack.body)
      const label = `${attack.path} ${JSON.stringify(attack.body).slice(0, 160)}`
      assert.equal(answer.status, attack.status, `${label}: ${answer.text}`)
      assert.equal(answer.body.status, attack.status, label)
      if (attack.message) assert.equal(answer.body.message, attack.message, label)
      attack.check?.(answer, world)
    }
    assertNothingOfAChanged(world, before, await snapshot(world), row.what)
  })
}

test('the matrix covers every operation of the operation table', () => {
  const all = (operationTable as readonly PathEntry[])
    .flatMap(entry => [...entry.operations, ...(entry.fallback ? [entry.fallback] : [])])
    .map(operation => operation.name)
  const covered = new Set(rows.flatMap(row => row.operations))
  assert.deepEqual(
    all.filter(name => !covered.has(name)),
    [],
  )
})

test("A's own requests still work after all of B's attempts", async ({ world: { t, a } }) => {
  const status = await t.post('/api/developer', { authkey: a.authkey, message: a.name, checkDispositivo: 'true' })
  assert.equal(status.body.dispositivo.conectado, true)
  const listing = await t.post('/api/create-message', { appkey: a.name, authkey: a.authkey, listaAgendamento: 'true', message: 'false' })
  assert.deepEqual(
    listing.body.data.map((item: { id: string }) => item.id),
    [a.scheduledId],
  )
})

test.run()
