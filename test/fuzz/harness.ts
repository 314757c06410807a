import assert from 'node:assert/strict'
import fc from 'fast-check'
import { operationTable } from '../../src/operations/table.ts'
import { MediaFetchError, type GatewayOptions, type MediaFetcher, type WebhookSender } from '../../src/index.ts'
import { distinguishingFields, operationsOf, type Operation, type PathEntry } from '../../src/operations/operation.ts'
import { internalsOf } from '../../src/internals.ts'
import { checkUrl } from '../../src/security/url-policy.ts'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'
import type { Answer } from '../helpers/http.ts'
import { DeepValue, HugeString } from './wire.ts'
import { PNG } from '../helpers/samples.ts'

/**
 * Property-based fuzzing of the HTTP edge. The field lists come from the operation table's schemas,
 * so a new operation (or a new field) is fuzzed without touching this file. Values mix plausible
 * ones (so that requests get past authentication into the handlers) with hostile ones.
 */

/** The phone of the fuzzed device and two contacts. */
export const DEVICE_PHONE = '5511999990001'
export const FRIEND = '5511988880002'
export const OTHER = '5511977770003'

/** Runs per property: FUZZ_RUNS overrides (CI uses the default). */
export const RUNS = Number(process.env.FUZZ_RUNS ?? 500)

/** The seed of this process's properties: FUZZ_SEED replays a failure. */
export const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31)

/** What the fuzzed gateway knows, to build plausible values. */
export interface FuzzWorld {
  t: TestGateway
  authkey: string
  otherAuthkey: string
  appkey: string
  deviceId: string
  groupId: string
  invite: string
  sentId: string
  receivedId: string
}

/** A gateway on the simulated network with one account, one linked device, a group and messages. */
export async function fuzzWorld(options: GatewayOptions = {}): Promise<FuzzWorld> {
  const t = await startGateway({ media: stubMedia, webhooks: stubWebhooks, rateLimit: false, ...options })
  const { authkey } = await t.register({ email: 'fuzz@example.com' })
  const { authkey: otherAuthkey } = await t.register({ email: 'fuzz-other@example.com' })
  const device = await t.linkedDevice(authkey, 'loja', DEVICE_PHONE)
  const group = t.network.createGroup(FRIEND, 'Grupo', [DEVICE_PHONE, OTHER])
  const receivedId = await t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'oi' })
  const sent = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: FRIEND, message: 'olá' })
  return {
    t,
    authkey,
    otherAuthkey,
    appkey: device.appkey,
    deviceId: device.id,
    groupId: group.id,
    invite: t.network.inviteLink(group.id)!,
    sentId: sent.body.id,
    receivedId,
  }
}

/** Put the fuzzed device back when a run deleted or unlinked it (operation 6 is fuzzed too). */
export async function restoreDevice(world: FuzzWorld): Promise<void> {
  const services = internalsOf(world.t.gateway)
  const account = await services.accounts.authenticate(world.authkey)
  const device = account && (await services.devices.find(account, 'loja'))
  if (device && (await services.devices.status(device)).connected) return
  const linked = await world.t.linkedDevice(world.authkey, 'loja', DEVICE_PHONE)
  world.deviceId = linked.id
}

/** Every field an operation reads: its schema's fields and its distinguishing fields. */
export function fieldsOf(operation: Operation): string[] {
  const shape = (operation.schema as { schema?: unknown }).schema
  const fields = shape && typeof shape === 'object' ? Object.keys(shape) : []
  return [...new Set([...fields, ...distinguishingFields(operation)])]
}

export { operationsOf }

export { send, sendRaw } from './wire.ts'

/** The paths of the operation table. */
export const paths: readonly PathEntry[] = operationTable

/** A value that is hostile to a parser or a validator. */
export function hostileValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom<unknown>(...SPECIAL_VALUES) },
    { weight: 2, arbitrary: flagSpelling() },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 64 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 64 }) },
    { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.bigInt().map(n => Number(n))) },
    { weight: 1, arbitrary: fc.integer({ min: 2, max: 5000 }).map(depth => new DeepValue(depth)) },
    { weight: 1, arbitrary: fc.integer({ min: 1000, max: 200_000 }).map(length => new HugeString(length)) },
    { weight: 1, arbitrary: prototypeKeys() },
  )
}

/** Every spelling of a flag a client might send, right or wrong. */
export function flagSpelling(): fc.Arbitrary<unknown> {
  return fc.constantFrom<unknown>(true, false, 'true', 'false', 'TRUE', 'False', ' true ', '1', '0', 1, 0, 'yes', 'no', 'on', 'off', 't', 'f', '', 'null', 'undefined', 2, -1, 'truee', 'excluir', 'EXCLUIR')
}

/** A plausible value for a wire field (so that requests reach the handlers), by field name. */
export function plausibleValue(field: string, world: FuzzWorld): fc.Arbitrary<unknown> {
  const pick = (...values: unknown[]) => fc.constantFrom(...values)
  const table: Record<string, () => fc.Arbitrary<unknown>> = {
    authkey: () => pick(world.authkey, world.authkey, world.otherAuthkey, 'chave-inexistente'),
    appkey: () => pick(world.appkey, 'loja', 'outro', world.deviceId),
    device: () => pick('loja', world.deviceId, world.appkey, 'nenhum'),
    message: () => pick('olá', 'false', 'true', 'loja', world.deviceId, 'Seu código: {code}', '👍', 'remove', FRIEND, 'Grupo novo'),
    to: () => pick(FRIEND, `+${FRIEND}`, world.groupId, `${FRIEND}@s.whatsapp.net`, 'todos', '123', 'loja'),
    setAppkey: () => pick('loja', 'novo-dispositivo', 'x'.repeat(65)),
    phone: () => pick(FRIEND, '+55 11 98888-0002', '12'),
    webhook: () => pick('https://hooks.example.com/zap', 'http://127.0.0.1:1/x', 'file:///etc/passwd', 'http://169.254.169.254/', 'nota url'),
    email: () => pick('fuzz@example.com', 'fuzz-2@example.com', 'not-an-email'),
    senha: () => pick('senha-secreta', '123'),
    nome: () => pick('Fuzz', ''),
    telefone: () => pick('+5511999990000', 'abc'),
    plano: () => pick('1', '2', '__proto__', 'constructor'),
    auth: () => pick('registrar', 'REGISTRAR', 'login'),
    agent_name: () => pick('Bia', ''),
    file: () => pick(PNG.toString('base64'), `data:image/png;base64,${PNG.toString('base64')}`, 'https://files.example.com/a.png', 'https://files.example.com/fail.png', 'http://10.0.0.1/x.png', '/etc/passwd', 'file:///etc/passwd', 'AAAA'),
    descricao: () => pick('legenda', ''),
    format: () => pick('png', 'mp3', 'ogg', 'pdf', 'exe', ''),
    contact: () => pick('Ana', ''),
    latitude: () => pick('-23.5505', '91', 'abc'),
    longitude: () => pick('-46.6333', '181', '1e3'),
    id: () => pick(world.sentId, world.receivedId, 'nao-existe'),
    deleteID: () => pick(world.sentId, world.receivedId, 'nao-existe'),
    markRead: () => pick(world.receivedId, world.sentId, 'true'),
    idMessagem: () => pick(world.receivedId, 'nao-existe'),
    idMensagem: () => pick(world.receivedId, 'nao-existe'),
    buttons: () => pick(BUTTONS, JSON.stringify(BUTTONS), [...BUTTONS, ...BUTTONS], [{ type: 'quickReplyButton', displaytext: 'x', id: 'x' }]),
    cards: () => pick(CARDS, JSON.stringify(CARDS), Array(11).fill(CARDS[0]), [{ ...CARDS[0], image_url: 'http://127.0.0.1/a.png' }]),
    header_title: () => pick('Loja', 'h'.repeat(61)),
    footer_text: () => pick('Rodapé', ''),
    agendamento: () => pick('2099-01-01 10:00:00', `${new Date().getUTCFullYear() + 1}-01-01 10:00:00`, '2020-01-01 10:00:00', '2026-02-30 10:00:00', 'amanhã'),
    verificarOTP: () => pick('123456', '000000', 'abcdef'),
    type: () => pick('chat', 'grupo', 'GRUPO', 'outro'),
    infoConvite: () => pick(world.groupId, world.invite, '120363000000000001@g.us', 'https://chat.whatsapp.com/'),
    usuarios: () => pick(`${FRIEND}-${OTHER}`, `["${FRIEND}"]`, [FRIEND], 'abc', Array(1024).fill(FRIEND).map((p, i) => String(Number(p) + i)).join('-')),
    entrarConvite: () => pick(world.invite, 'https://chat.whatsapp.com/AAAAAAAAAAAAAAAAAAAAAA', 'convite'),
    GerenciarLinks: () => pick('excluir', 'criar'),
  }
  return (table[field] ?? (() => flagSpelling()))()
}

/** One body for a path: the fields of one of its operations, each plausible, hostile or absent, plus extra keys. */
export function bodyFor(entry: PathEntry, world: FuzzWorld): fc.Arbitrary<Record<string, unknown>> {
  const operations = operationsOf(entry)
  const allFields = [...new Set(operations.flatMap(fieldsOf))]
  return fc
    .constantFrom(...operations)
    .chain(operation => {
      const fields = fieldsOf(operation)
      const entries = fields.map(field =>
        fc.oneof(
          { weight: 6, arbitrary: plausibleValue(field, world).map(value => [field, value] as const) },
          { weight: 2, arbitrary: hostileValue().map(value => [field, value] as const) },
          { weight: 1, arbitrary: fc.constant(undefined) },
        ),
      )
      const extras = fc.array(
        fc.tuple(fc.oneof(fc.constantFrom(...allFields, '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'), fc.string({ maxLength: 12 })), hostileValue()),
        { maxLength: 3 },
      )
      return fc.tuple(fc.tuple(...entries), extras)
    })
    .map(([entries, extras]) => {
      const body: Record<string, unknown> = {}
      for (const entry of entries) if (entry) defineField(body, entry[0], entry[1])
      for (const [key, value] of extras) defineField(body, key, value)
      return body
    })
}

/** How a body travels: JSON, urlencoded or multipart. */
export const encodings = fc.constantFrom('json', 'json', 'json', 'form', 'multipart') as fc.Arbitrary<'json' | 'form' | 'multipart'>

/**
 * The properties every answer must have: never 5xx, a JSON `{status: number, message: string}` body
 * whose status is the HTTP code (mirror mode) or HTTP 200 (always200 mode).
 */
export function assertSound(answer: Answer, mode: 'mirror' | 'always200' = 'mirror'): void {
  assert.ok(answer.body && typeof answer.body === 'object', `not a JSON object: HTTP ${answer.status} ${answer.text.slice(0, 200)}`)
  assert.equal(typeof answer.body.status, 'number', answer.text.slice(0, 200))
  assert.equal(typeof answer.body.message, 'string', answer.text.slice(0, 200))
  assert.ok(answer.body.status < 500, `answered ${answer.body.status}: ${answer.text.slice(0, 300)}`)
  assert.equal(answer.status, mode === 'mirror' ? answer.body.status : 200, `HTTP ${answer.status} for body status ${answer.body.status}`)
}

/** The own property names of the built-in prototypes, to detect prototype pollution. */
export function prototypeSnapshot(): string {
  return JSON.stringify([Object.prototype, Array.prototype, Function.prototype, String.prototype].map(p => Object.getOwnPropertyNames(p).sort()))
}

/** Assert no built-in prototype gained or lost a property, and a fresh object has no stray ones. */
export function assertNoPollution(before: string): void {
  assert.equal(prototypeSnapshot(), before, 'a built-in prototype changed')
  const probe: Record<string, unknown> = {}
  for (const key of ['polluted', 'status', 'message', 'authkey', 'isAdmin', 'checkDispositivo']) assert.equal(probe[key], undefined, `Object.prototype.${key} is set`)
}

/** Run a property with the harness's seed, printing the seed (and how to replay it) on failure. */
export async function check<T>(name: string, arbitrary: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, runs = RUNS): Promise<void> {
  try {
    await fc.assert(fc.asyncProperty(arbitrary, predicate), { numRuns: runs, seed: SEED, endOnFailure: true, includeErrorInReport: true })
  } catch (err) {
    console.error(`fuzz property "${name}" failed with seed ${SEED}; replay with FUZZ_SEED=${SEED}`)
    throw err
  }
}

// --- Internal helpers ---

const BUTTONS = [
  { type: 'replyButton', displaytext: 'Sim', id: 'sim' },
  { type: 'urlButton', displaytext: 'Site', action: 'https://example.com' },
  { type: 'callButton', displaytext: 'Ligar', action: '+551133334444' },
]

const CARDS = [
  {
    image_url: 'https://files.example.com/card.png',
    title: 'Pizza',
    buttons: [{ type: 'quickReplyButton', displaytext: 'Quero', id: 'pizza' }],
  },
]

const SPECIAL_VALUES: unknown[] = [
  null,
  '',
  ' ',
  '\t\n',
  '\u0000',
  '\ud800',
  '\u202e',
  '%00',
  '%',
  '../../etc/passwd',
  '${jndi:ldap://x}',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '{"a":',
  '[{"type":"replyButton"}]',
  '[]',
  '{}',
  'NaN',
  'Infinity',
  '-0',
  '1e999',
  0,
  -0,
  Number.MAX_SAFE_INTEGER + 2,
  1e308,
  -1e308,
  [],
  {},
  [null],
  [[]],
  { toString: 'x' },
  { valueOf: 1 },
  { length: 5 },
  { 0: 'a', 1: 'b' },
  { 0: { type: 'replyButton', displaytext: 'x' } },
]

function prototypeKeys(): fc.Arbitrary<unknown> {
  return fc.constantFrom<unknown>(
    JSON.parse('{"__proto__":{"polluted":true,"status":500}}'),
    JSON.parse('{"constructor":{"prototype":{"polluted":true}}}'),
    JSON.parse('[{"__proto__":{"type":"replyButton","displaytext":"x"}}]'),
    JSON.parse('{"prototype":{"polluted":true},"0":{"__proto__":{"polluted":true}}}'),
  )
}

/** Set an own property, even one named `__proto__` (a plain assignment would change the prototype). */
function defineField(body: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(body, key, { value, enumerable: true, writable: true, configurable: true })
}

const stubMedia: MediaFetcher = {
  async fetch(url) {
    const checked = checkUrl(url, { allowPrivate: false })
    if ('refused' in checked) throw new MediaFetchError('refused', `refused (${checked.refused})`)
    if (url.includes('fail')) throw new MediaFetchError('unreachable', 'simulated failure')
    return { data: PNG, contentType: 'image/png', fileName: 'a.png' }
  },
}

const stubWebhooks: WebhookSender = {
  async send() {
    return { status: 200 }
  },
}
