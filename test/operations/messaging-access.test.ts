import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { DEVICE_PHONE, FRIEND, assertError, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'
import { PNG } from '../helpers/samples.ts'

interface Context {
  g: SendingGateway
  /** Every operation of this issue: path, name and a body that would succeed for the test device. */
  operations: [path: string, name: string, body: Record<string, unknown>][]
}

const test = suite<Context>('messaging operations: keys of the caller only')

test.before(async ctx => {
  ctx.g = await sendingGateway()
  const { g } = ctx
  const received = await g.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'oi' })
  const group = g.network.createGroup(FRIEND, 'G', [DEVICE_PHONE])
  const card = { image_url: 'https://example.com/a.png', title: 'A', buttons: [{ type: 'quickReplyButton', displaytext: 'Q', id: 'q' }] }
  const to = FRIEND
  ctx.operations = [
    ['/api/create-message', '8 send text', { to, message: 'x' }],
    ['/api/create-message', '9 send media', { to, file: PNG.toString('base64') }],
    ['/api/create-message', '10 send contact', { to, contact: 'Ana', message: FRIEND }],
    ['/api/create-message', '11 send location', { to, latitude: '1', longitude: '2' }],
    ['/api/create-message', '12 react', { to, reactionMessage: 'true', message: '👍', id: received }],
    ['/api/create-message', '13 delete', { to, message: 'false', deleteID: received }],
    ['/api/create-message', '14 mark as read', { to, markRead: received }],
    ['/api/create-message', '15 send buttons', { to, message: 'x', buttons: [{ type: 'replyButton', displaytext: 'ok' }] }],
    ['/api/create-message', '16 send carousel', { to, message: 'x', cards: [card] }],
    ['/api/create-message', '17 list schedules', { listaAgendamento: 'true', message: 'false' }],
    ['/api/create-message', '18 verify OTP', { to, message: 'false', verificarOTP: '123456' }],
    ['/api/create-message', 'send OTP', { to, enviarOTP: 'true' }],
    ['/api/groups', '21 group information', { message: 'false', infoConvite: group.id }],
    ['/api/groups', '22 create group', { message: 'G', usuarios: FRIEND, criarGrupo: 'true' }],
    ['/api/groups', '23 join by invite', { message: 'false', entrarConvite: g.network.inviteLink(group.id) }],
  ]
})
test.after(async ctx => {
  await ctx.g.stop()
})

const extraFor = (name: string) => (name.includes('OTP') && name.startsWith('18') ? { valid: false } : {})

test('every operation answers 404 Nenhum dispositivo encontrado. for an appkey (or device name) of another account', async ({ g, operations }) => {
  const other = await g.t.register()
  const foreign = await g.t.linkedDevice(other.authkey, 'alheio', '5511955550005')
  for (const [path, name, body] of operations) {
    for (const appkey of [foreign.appkey, 'alheio']) {
      const answer = await g.t.post(path, { ...body, appkey, authkey: g.authkey })
      assertError(answer, 404, 'Nenhum dispositivo encontrado.', extraFor(name))
    }
  }
  assert.deepEqual(g.network.inbox('5511955550005'), [])
})

test('every operation answers 401 validation.required for an unknown authkey, even with the right appkey', async ({ g, operations }) => {
  for (const [path, name, body] of operations) {
    for (const authkey of ['unknown-key', 'x'.repeat(300)]) {
      assertError(await g.t.post(path, { ...body, appkey: g.appkey, authkey }), 401, 'validation.required', extraFor(name))
    }
  }
  assert.deepEqual(
    g.network.inbox(FRIEND).filter(e => e.from === DEVICE_PHONE),
    [],
  )
})

test('the other account own keys cannot reach this account device either', async ({ g, operations }) => {
  const other = await g.t.register()
  for (const [path, name, body] of operations) {
    assertError(await g.t.post(path, { ...body, appkey: g.appkey, authkey: other.authkey }), 404, 'Nenhum dispositivo encontrado.', extraFor(name))
  }
})

test.run()
