import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { operationTable } from '../../src/operations/table.ts'
import type { PathEntry } from '../../src/operations/operation.ts'
import { internalsOf } from '../../src/internals.ts'
import { PNG } from '../helpers/samples.ts'
import { FRIEND, OTHER } from '../helpers/messaging.ts'
import { assertNothingOfAChanged, snapshot, tenancyWorld, type TenancyWorld } from '../helpers/tenancy.ts'

/**
 * Keys that are not the account's key now: A's authkey with spaces around it or in another case,
 * A's other secrets (an appkey, a share link token, the webhook secret) sent as the authkey, B's
 * appkey as the authkey, A's key while A is suspended or expired, A's key after it was rotated.
 * Every keyed operation refuses each with its own unauthenticated answer (the spec's Errors table:
 * operation 2 `Authkey invalida ou expirada.`, 3 `Authkey inválida ou não encontrada.`, 6 `Authkey
 * Invalida`, the others `validation.required`), and nothing of A's changes.
 */
const test = suite<{ world: TenancyWorld; link: string }>('keys that are not the account key now, on every keyed operation')

test.before(async ctx => {
  ctx.world = await tenancyWorld()
  const { t, a } = ctx.world
  // A share link of A's unlinked device (operation 4 on it again answers a fresh link).
  const added = await t.post('/api/developer', { authkey: a.authkey, message: a.randomName, conecteQR: 'true' })
  assert.equal(added.status, 200, added.text)
  ctx.link = added.body.link.split('/qr/')[1]
})
test.after(ctx => ctx.world.t.stop())

const CARD = { image_url: 'https://files.example.com/a.png', title: 'Pizza', buttons: [{ type: 'quickReplyButton', displaytext: 'Quero', id: 'p' }] }

/** Every keyed operation, with a body that A's key would make work (or at least reach A's data), the key left out. */
function bodies({ a }: TenancyWorld): [name: string, path: string, body: Record<string, unknown>][] {
  const appkey = { appkey: a.name }
  return [
    ['createAgent', '/api/v2/ia', { device: a.name, agent_name: 'Outro' }],
    ['generateQrCode', '/api/v2/qrcode', { setAppkey: a.randomName }],
    ['addDevice', '/api/developer', { message: a.randomName, conecteQR: 'true' }],
    ['deviceStatus', '/api/developer', { message: a.name, checkDispositivo: 'true' }],
    ['deleteDevice', '/api/developer', { message: a.name, apagarDispositivo: 'true', apagarAppkey: 'true' }],
    ['deleteShareLink', '/api/developer', { appkey: a.randomName, message: 'false', to: a.randomName, GerenciarLinks: 'excluir' }],
    ['sendText', '/api/create-message', { ...appkey, to: FRIEND, message: 'intruso' }],
    ['sendMedia', '/api/create-message', { ...appkey, to: FRIEND, file: PNG.toString('base64') }],
    ['sendContact', '/api/create-message', { ...appkey, to: FRIEND, contact: 'Ana', message: OTHER }],
    ['sendLocation', '/api/create-message', { ...appkey, to: FRIEND, latitude: '-23.5', longitude: '-46.6' }],
    ['reactToMessage', '/api/create-message', { ...appkey, to: FRIEND, reactionMessage: 'true', message: '👍', id: a.sentId }],
    ['deleteMessage', '/api/create-message', { ...appkey, to: FRIEND, message: 'false', deleteID: a.sentId }],
    ['markMessageRead', '/api/create-message', { ...appkey, to: FRIEND, markRead: a.receivedId }],
    ['sendButtons', '/api/create-message', { ...appkey, to: FRIEND, message: 'x', buttons: [{ type: 'replyButton', displaytext: 'Sim' }] }],
    ['sendCarousel', '/api/create-message', { ...appkey, to: FRIEND, message: 'x', cards: [CARD] }],
    ['listSchedules', '/api/create-message', { ...appkey, listaAgendamento: 'true', message: 'false' }],
    ['sendOtp', '/api/create-message', { ...appkey, to: OTHER, enviarOTP: 'true' }],
    ['verifyOtp', '/api/create-message', { ...appkey, to: OTHER, message: 'false', verificarOTP: '123456' }],
    ['deleteFlowConversations', '/api/settings', { ...appkey, to: 'todos', message: 'false', deleteConversaFluxo: 'true' }],
    ['switchWebhook', '/api/settings', { ...appkey, type: 'chat', message: a.deviceId, statusWebhook: 'true' }],
    ['groupInfo', '/api/groups', { ...appkey, message: 'false', infoConvite: a.groupId }],
    ['createGroup', '/api/groups', { ...appkey, message: 'Outro', usuarios: FRIEND, criarGrupo: 'true' }],
    ['joinGroup', '/api/groups', { ...appkey, message: 'false', entrarConvite: 'https://chat.whatsapp.com/AAAAAAAAAAAAAAAAAAAAAA' }],
  ]
}

/** The spec's unauthenticated answer of each operation. */
function refusal(name: string): Record<string, unknown> {
  if (name === 'createAgent') return { status: 401, message: 'Authkey invalida ou expirada.' }
  if (name === 'generateQrCode') return { status: 401, message: 'Authkey inválida ou não encontrada.' }
  if (name === 'deleteDevice') return { status: 401, message: 'Authkey Invalida' }
  if (name === 'verifyOtp') return { status: 401, message: 'validation.required', valid: false }
  return { status: 401, message: 'validation.required' }
}

/** Every keyed operation with each of `keys` is refused as unauthenticated, and nothing of A's changes. */
async function allRefused(world: TenancyWorld, keys: string[], what: string): Promise<void> {
  const before = await snapshot(world)
  for (const authkey of keys)
    for (const [name, path, body] of bodies(world)) {
      const answer = await world.t.post(path, { ...body, authkey })
      const label = `${what}: ${name} with ${JSON.stringify(authkey)}`
      assert.equal(answer.status, 401, `${label}: ${answer.text}`)
      assert.deepEqual(answer.body, refusal(name), label)
    }
  assertNothingOfAChanged(world, before, await snapshot(world), what)
}

test('the table of this file names every keyed operation', ({ world }) => {
  const keyed = (operationTable as readonly PathEntry[])
    .flatMap(entry => [...entry.operations, ...(entry.fallback ? [entry.fallback] : [])])
    .filter(operation => operation.device)
    .map(operation => operation.name)
  assert.deepEqual(
    bodies(world)
      .map(([name]) => name)
      .sort(),
    [...keyed].sort(),
  )
})

test("A's authkey with spaces around it, or in another case, is not A's key", async ({ world }) => {
  const key = world.a.authkey
  const variants = [` ${key}`, `${key} `, `${key}\n`, `\t${key}`, key.toUpperCase(), key.toLowerCase()].filter(v => v !== key)
  await allRefused(world, variants, 'key variants')
})

test("A's other secrets, and B's appkey, are not authkeys", async ({ world, link }) => {
  const { t, a, b } = world
  const status = await t.post('/api/developer', { authkey: a.authkey, message: a.name, checkDispositivo: 'true' })
  await allRefused(world, [a.name, a.randomAppkey, a.deviceId, link, status.body.dispositivo.webhookSecret, b.appkey, b.deviceId], 'other secrets')
})

test("A's key while A is suspended or expired is refused everywhere; resumed or renewed it works again", async ({ world }) => {
  const { t, a } = world
  await t.gateway.accounts.suspend(a.email)
  await allRefused(world, [a.authkey], 'suspended')
  await t.gateway.accounts.resume(a.email)
  const { storage, epoch } = internalsOf(t.gateway)
  const key = `account:${a.accountId}`
  const record = (await storage.get<{ expiresOn: string }>(key))!
  await storage.set(key, { ...record, expiresOn: '2020-01-01' })
  await epoch.bump()
  await allRefused(world, [a.authkey], 'expired')
  await storage.set(key, record)
  await epoch.bump()
  const answer = await t.post('/api/developer', { authkey: a.authkey, message: a.name, checkDispositivo: 'true' })
  assert.equal(answer.status, 200, answer.text)
})

test("A's key after a rotation is refused everywhere; the new one works", async ({ world }) => {
  const { t, a } = world
  const warm = await t.post('/api/developer', { authkey: a.authkey, message: a.name, checkDispositivo: 'true' })
  assert.equal(warm.status, 200, 'warm: the old key is cached')
  const rotated = await t.gateway.accounts.rotateKey(a.email)
  await allRefused(world, [a.authkey], 'rotated')
  const answer = await t.post('/api/developer', { authkey: rotated.authkey, message: a.name, checkDispositivo: 'true' })
  assert.equal(answer.status, 200, answer.text)
  world.a.authkey = rotated.authkey
})

test("B's devices named after A's device ids are B's: B's status and deletion by that name reach them, never A's", async ({ world }) => {
  const { t, a, b } = world
  const before = await snapshot(world)
  for (const id of [a.deviceId, a.randomDeviceId]) {
    const made = await t.post('/api/v2/qrcode', { authkey: b.authkey, setAppkey: id })
    assert.equal(made.status, 200, made.text)
    assert.notEqual(made.body.id, id)
    const status = await t.post('/api/developer', { authkey: b.authkey, message: id, checkDispositivo: 'true' })
    assert.deepEqual([status.status, status.body.dispositivo?.id, status.body.dispositivo?.nome], [200, made.body.id, id], status.text)
    const mine = await t.post('/api/developer', { authkey: a.authkey, message: id, checkDispositivo: 'true' })
    assert.equal(mine.body.dispositivo?.id, id, "A's own id still names A's device")
    const deleted = await t.post('/api/developer', { authkey: b.authkey, message: id, apagarDispositivo: 'true', apagarAppkey: 'true' })
    assert.equal(deleted.status, 200, deleted.text)
    const after = await t.post('/api/developer', { authkey: b.authkey, message: made.body.id, checkDispositivo: 'true' })
    assert.equal(after.status, 404, "B's device of that name is the one deleted")
  }
  assertNothingOfAChanged(world, before, await snapshot(world), 'devices named after ids')
})

test("a deleted device's name, appkey, id and share link reach nothing, its appkey kept or not", async ({ world, link }) => {
  const { t, a } = world
  const keep = await t.post('/api/developer', { authkey: a.authkey, message: a.randomDeviceId, apagarDispositivo: 'true' })
  const drop = await t.post('/api/developer', { authkey: a.authkey, message: a.deviceId, apagarDispositivo: 'true', apagarAppkey: 'true' })
  assert.deepEqual([keep.status, drop.status], [200, 200], keep.text + drop.text)
  const gone = { status: 404, message: 'Nenhum dispositivo encontrado.' }
  for (const ref of [a.name, a.deviceId, a.randomName, a.randomAppkey, a.randomDeviceId])
    for (const [name, path, body] of bodies(world)) {
      if (name === 'generateQrCode' || name === 'addDevice') continue // they make a device anew
      const answer = await t.post(path, {
        ...body,
        authkey: a.authkey,
        ...('appkey' in body ? { appkey: ref } : name === 'createAgent' ? { device: ref } : { message: ref }),
      })
      const label = `${name} with the deleted ${ref}`
      assert.equal(answer.status, 404, `${label}: ${answer.text}`)
      assert.deepEqual(answer.body, name === 'verifyOtp' ? { ...gone, valid: false } : gone, label)
    }
  assert.equal((await fetch(`${t.url}/qr/${link}/state`)).status, 404, 'the share link of the deleted device')
})

test.run()
