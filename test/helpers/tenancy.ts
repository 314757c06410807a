import assert from 'node:assert/strict'
import type { WebhookSender } from '../../src/index.ts'
import { startGateway, waitFor, type TestGateway } from './gateway.ts'
import { FRIEND, OTHER } from './messaging.ts'
import { RecordingStorage } from './recording-storage.ts'
import { internalsOf } from '../../src/internals.ts'

/** Phones of the tenancy world (FRIEND and OTHER are the messaging helpers' contacts). */
export const A_PHONE = '5511911110001'
export const B_PHONE = '5511922220002'

/** Everything account A owns, by the references a client could send. */
export interface TenantA {
  authkey: string
  accountId: string
  /** The linked device (`setAppkey: loja-a`, so its appkey is its name). */
  name: string
  deviceId: string
  /** A second device with a random appkey, not linked. */
  randomName: string
  randomAppkey: string
  randomDeviceId: string
  groupId: string
  sentId: string
  receivedId: string
  scheduledId: string
  email: string
}

/** Account B, with a linked device of its own. */
export interface TenantB {
  authkey: string
  appkey: string
  deviceId: string
}

/** Two accounts on one gateway whose raw store can be read. */
export interface TenancyWorld {
  t: TestGateway
  storage: RecordingStorage
  a: TenantA
  b: TenantB
  /** Every device reference of A a client could try: names, ids, appkeys. */
  refsA: string[]
}

/**
 * Account A with every kind of record: a linked device with a webhook, an agent and its flow
 * conversation, a group, a sent and a received message, a scheduled message, a pending OTP, a QR
 * share link on a second device; account B with a linked device. Returns once the world is quiet
 * (webhook outbox drained, agent reply sent).
 */
export async function tenancyWorld(): Promise<TenancyWorld> {
  const storage = new RecordingStorage()
  const webhooks: WebhookSender = { send: async () => ({ status: 200 }) }
  const t = await startGateway({ storage, webhooks, allowPrivateUrls: true, rateLimit: false, agentResponder: () => 'Olá, aqui é a Bia.' })
  const email = 'ana.tenant@example.com'
  const aKey = (await t.register({ email })).authkey
  const device = await t.linkedDevice(aKey, 'loja-a', A_PHONE, { webhook: 'https://hooks.example.com/a' })
  const random = await t.post('/api/developer', { authkey: aKey, message: 'aleatorio-a', conecteQR: 'true' })
  const keysA = { appkey: 'loja-a', authkey: aKey }
  ok(await t.post('/api/v2/ia', { authkey: aKey, device: 'loja-a', agent_name: 'Bia' }))
  const group = ok(await t.post('/api/groups', { ...keysA, message: 'Clientes A', usuarios: FRIEND, criarGrupo: 'true' }))
  const sent = ok(await t.post('/api/create-message', { ...keysA, to: FRIEND, message: 'Pedido confirmado' }))
  const scheduled = ok(
    await t.post('/api/create-message', { ...keysA, to: FRIEND, message: 'Lembrete', agendamento: `${new Date().getUTCFullYear() + 1}-06-01 10:00:00` }),
  )
  ok(await t.post('/api/create-message', { ...keysA, to: OTHER, enviarOTP: 'true' }))
  ok(await t.post('/api/settings', { ...keysA, type: 'grupo', message: device.id, statusWebhook: 'false' }))
  const receivedId = await t.network.sendFromPhone(FRIEND, A_PHONE, { type: 'text', text: 'Qual o horário?' })
  await waitFor(() => t.network.inbox(FRIEND).some(e => (e as { text?: string }).text === 'Olá, aqui é a Bia.'), 5000, "A's agent reply")
  const bKey = (await t.register()).authkey
  const b = await t.linkedDevice(bKey, 'loja-b', B_PHONE)
  const account = await internalsOf(t.gateway).accounts.authenticate(aKey)
  const a: TenantA = {
    authkey: aKey,
    accountId: account!.id,
    name: 'loja-a',
    deviceId: device.id,
    randomName: 'aleatorio-a',
    randomAppkey: random.body.appkey,
    randomDeviceId: random.body.id,
    groupId: group.grupoId,
    sentId: sent.id,
    receivedId,
    scheduledId: scheduled.id,
    email,
  }
  const world = {
    t,
    storage,
    a,
    b: { authkey: bKey, appkey: 'loja-b', deviceId: b.id },
    refsA: [a.name, a.deviceId, a.randomName, a.randomAppkey, a.randomDeviceId],
  }
  await quiet(world)
  return world
}

/** What A has: its raw store records (key to JSON text) and the simulated phones' inboxes. */
export interface Snapshot {
  records: Map<string, string>
  inboxes: string
  linked: string | undefined
}

/** Wait until nothing is in flight (network, webhook outbox), then read the raw store and the inboxes. */
export async function snapshot(world: TenancyWorld): Promise<Snapshot> {
  await quiet(world)
  // The gateway's own heartbeat (instance:<id>) and cache epoch are nobody's data.
  const records = new Map(
    [...world.storage.entries].filter(([key]) => !key.startsWith('instance:') && key !== 'cache-epoch').map(([key, entry]) => [key, entry.json]),
  )
  const inboxes = JSON.stringify([A_PHONE, B_PHONE, FRIEND, OTHER].map(phone => world.t.network.inbox(phone)))
  return { records, inboxes, linked: world.t.network.linkedPhone(world.a.deviceId) }
}

/**
 * Nothing of A's changed between two snapshots: every record that existed is byte-identical (none
 * removed), no new record names A's account or devices, no phone received anything, A's device is
 * still linked. New records of B are allowed.
 */
export function assertNothingOfAChanged(world: TenancyWorld, before: Snapshot, after: Snapshot, what: string): void {
  for (const [key, json] of before.records) assert.equal(after.records.get(key), json, `${what}: record ${key} changed`)
  const marks = [world.a.accountId, world.a.deviceId, world.a.randomDeviceId]
  for (const [key, json] of after.records) {
    if (before.records.has(key)) continue
    const ofA = marks.some(mark => key.includes(mark) || json.includes(`"accountId":"${mark}"`) || json.includes(`"deviceId":"${mark}"`))
    assert.ok(!ofA, `${what}: a new record of A appeared: ${key}`)
  }
  assert.equal(after.inboxes, before.inboxes, `${what}: a phone received something`)
  assert.equal(after.linked, before.linked, `${what}: A's device link changed`)
}

// --- Internal helpers ---

function ok(answer: { status: number; body: any; text: string }): any {
  assert.equal(answer.status, 200, answer.text)
  return answer.body
}

async function quiet({ t, a }: TenancyWorld | { t: TestGateway; a: TenantA }): Promise<void> {
  await t.network.settled()
  await waitFor(async () => (await t.gateway.webhooks.pending(a.deviceId)) === 0, 5000, "A's webhook outbox to drain")
}
