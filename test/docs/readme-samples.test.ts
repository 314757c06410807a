import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { is } from 'superstruct'
import type { AgentResponder, MediaFetcher, WebhookSender } from '../../src/index.ts'
import { operationTable } from '../../src/operations/table.ts'
import { operationsOf, type PathEntry } from '../../src/operations/operation.ts'
import { operationSelector } from '../../src/http/select-operation.ts'
import { internalsOf } from '../../src/internals.ts'
import { contactKey } from '../../src/domain/flows.ts'
import { startGateway, waitFor, type TestGateway } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'
import { answerChecker, requestMatcher, type AnswerCheck, type Matcher } from '../helpers/openapi.ts'
import { readmeSamples, type ReadmeSample } from '../helpers/readme.ts'
import { JPEG, PDF } from '../helpers/samples.ts'

/**
 * Every request/answer pair of the API reference's "The API" section (docs/api.md) runs, in order, against a gateway on
 * the simulated network: a story in which the samples are true. The answer must have the
 * sample's status and message, exactly its keys, and its values, except:
 * - a value with `…` stands for anything of that type (a secret, a key, a QR);
 * - a value the gateway generates (PATTERNS) matches by form, and the real value then stands for it
 *   wherever the sample reappears (operation 8's message id is the target of 12 and 13);
 * - values the story maps (STORY) are replaced by the real ones, in requests and answers.
 * Each request must also be chosen by the router as the OpenAPI document's oneOf says, and each
 * answer must fit the operation's declared answer struct and the document's 200 response of its path.
 */

/** Sample values the gateway generates, by form. */
const PATTERNS: [RegExp, string][] = [
  [/^3EB0[0-9A-F]{16}$/, 'a network message id'],
  [/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'a schedule id'],
  [/^\d{10,30}@g\.us$/, 'a group id'],
  [/^https:\/\/chat\.whatsapp\.com\/[A-Za-z0-9]+$/, 'an invite link'],
  [/^\d{4}-\d{2}-\d{2}$/, 'a date'],
]

/** Sample values of docs/api.md that the story makes real (see `before`). */
const STORY = {
  /** The message the customer sent, read in 14. */
  receivedId: '3EB0200C46E607C82070',
  /** The schedule time of 17 (the sample's date would fall into the past). */
  scheduleTime: '2026-12-01 18:00:00',
  /** The code the customer received, verified in 18. */
  otpCode: '482913',
  /** The id of the device `loja` (20). */
  deviceId: 'd3d7b7d0-b988-4e4e-8935-0409fc58f514',
  /** The group of 21 and 23, and its invite. */
  groupId: '120363858114266717@g.us',
  invite: 'https://chat.whatsapp.com/GPiWoLO26dKzFBO2wMKjZD',
}
const DEVICE_PHONE = '5511999990001'
const RECEPTION_PHONE = '5511988887777'
const CUSTOMER = '5511988880002'
const OTHER = '5511977770003'
const AGENT_REPLY = 'Olá! Como posso ajudar?'

type Story = { t: TestGateway; stands: Map<string, string>; authkey?: string }

/** What happens before the first sample under a heading (by its number), so that the sample is true as written. */
const before: Record<string, (story: Story) => Promise<void>> = {
  '2.': async ({ t, authkey }) => void (await t.post('/api/v2/qrcode', { authkey, setAppkey: 'loja' })),
  '5.': story => linkByName(story, 'recepcao', RECEPTION_PHONE),
  '8.': story => linkByName(story, 'loja', DEVICE_PHONE),
  '14.': async ({ t, stands }) =>
    void stands.set(STORY.receivedId, await t.network.sendFromPhone(CUSTOMER, DEVICE_PHONE, { type: 'text', text: 'Quando chega meu pedido?' })),
  '17.': async ({ stands }) => void stands.set(STORY.scheduleTime, `${new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)} 18:00:00`),
  '18.': async ({ t, stands }) => {
    const code = t.network.inbox(CUSTOMER).flatMap(entry => (entry.type === 'text' ? (/Seu código Loja: (\d{6})/.exec(entry.text)?.[1] ?? []) : []))
    assert.is(code.length, 1, 'the customer received one OTP code')
    stands.set(STORY.otpCode, code[0])
  },
  '19.': async story => {
    const device = await deviceNamed(story, 'loja')
    await waitFor(
      async () => (await internalsOf(story.t.gateway).flows.history(device.id, contactKey(CUSTOMER)!)).turns.length > 0,
      5000,
      "the agent's conversation",
    )
  },
  '20.': async story => void story.stands.set(STORY.deviceId, (await deviceNamed(story, 'loja')).id),
  '21.': async ({ t, stands }) => {
    const group = t.network.createGroup(OTHER, 'Clientes VIP', [CUSTOMER])
    stands.set(STORY.groupId, group.id)
    stands.set(STORY.invite, t.network.inviteLink(group.id)!)
  },
}

const media: MediaFetcher = {
  fetch: async url => (url.endsWith('.pdf') ? { data: PDF, contentType: 'application/pdf' } : { data: JPEG, contentType: 'image/jpeg' }),
}
const webhooks: WebhookSender = { send: async () => ({ status: 200 }) }
const agentResponder: AgentResponder = { respond: () => AGENT_REPLY }

type Ctx = { story: Story; matches: Matcher; fits: AnswerCheck; ran: Set<string> }
const samples = readmeSamples()
const readme = suite<Ctx>("docs/api.md: the API section's samples against a running gateway")
readme.before(async ctx => {
  const t = await startGateway({ media, webhooks, agentResponder })
  ctx.story = { t, stands: new Map() }
  const document = (await request(`${t.url}/openapi.json`)).body
  ctx.matches = await requestMatcher(document)
  ctx.fits = await answerChecker(document)
  ctx.ran = new Set()
})
readme.after(ctx => ctx.story.t.stop())

readme('docs/api.md has a sample of every operation of the table, each on its own path', () => {
  const documented = new Set(samples.map(sample => operationOf(sample).name))
  for (const entry of operationTable as readonly PathEntry[])
    for (const operation of operationsOf(entry)) assert.ok(documented.has(operation.name), `a sample of ${operation.name}`)
})

for (const sample of samples) {
  readme(`sample under "${sample.heading}"`, async ({ story, matches, fits, ran }) => {
    const number = /^(\d+\.)/.exec(sample.heading)?.[1]
    if (number && before[number] && !ran.has(number)) {
      ran.add(number)
      await before[number](story)
    }
    const operation = operationOf(sample)
    assert.equal(matches(sample.path, sample.request), [operation.name], 'the OpenAPI oneOf matches the operation the router chooses')
    const answer = await story.t.post(sample.path, resolveRequest(sample.request, story))
    assert.is(answer.status, answer.body?.status, 'HTTP status = body status')
    assert.equal(compare(sample.answer, answer.body, story.stands), [], `${sample.heading}: ${answer.text}`)
    assert.ok(is(answer.body, operation.answer), `the answer fits ${operation.name}'s answer struct`)
    assert.equal(fits(sample.path, answer.status, answer.body), [], "the answer fits the OpenAPI document's response")
    if (operation.name === 'registerUser') story.authkey = answer.body.data.authkey
  })
}

readme('every story step ran', ({ ran }) => {
  assert.equal([...ran].sort(), Object.keys(before).sort())
})

readme.run()

// --- Internal helpers ---

function operationOf(sample: ReadmeSample) {
  const entry = (operationTable as readonly PathEntry[]).find(e => e.path === sample.path)
  assert.ok(entry, `${sample.path} is a path of the table`)
  const operation = operationSelector(entry)({ fields: sample.request, uploads: new Map() })
  assert.ok(operation, `a sample of ${sample.path} chooses an operation`)
  return operation
}

/** The story account's device named `name`. */
async function deviceNamed({ t, authkey }: Story, name: string) {
  const [device] = (await t.gateway.findDevices(authkey!, name)) ?? []
  assert.ok(device, `the device ${name}`)
  return device
}

async function linkByName(story: Story, name: string, phone: string): Promise<void> {
  const device = await deviceNamed(story, name)
  await story.t.network.scan({ deviceId: device.id }, phone)
  await waitFor(async () => (await deviceNamed(story, name)).connected, 5000, `${name} to connect`)
}

/** The sample request with `…` (only the authkey may be one) and story values replaced by real ones. */
function resolveRequest(body: Record<string, unknown>, story: Story): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(body).map(([key, value]) => {
      if (value === '…') {
        assert.is(key, 'authkey', `only the authkey is a placeholder in requests, not ${key}`)
        return [key, story.authkey]
      }
      return [key, typeof value === 'string' ? (story.stands.get(value) ?? value) : value]
    }),
  )
}

/** Where `actual` differs from the sample `expected` (empty: it matches), per the rules above. */
function compare(expected: unknown, actual: unknown, stands: Map<string, string>, where = 'answer'): string[] {
  if (typeof expected === 'string') {
    if (expected.includes('…')) return typeof actual === 'string' ? [] : [`${where}: expected a string, got ${JSON.stringify(actual)}`]
    if (stands.has(expected))
      return actual === stands.get(expected) ? [] : [`${where}: expected ${stands.get(expected)} (for ${expected}), got ${JSON.stringify(actual)}`]
    const pattern = PATTERNS.find(([regex]) => regex.test(expected))
    if (pattern) {
      if (typeof actual !== 'string' || !pattern[0].test(actual)) return [`${where}: expected ${pattern[1]}, got ${JSON.stringify(actual)}`]
      stands.set(expected, actual)
      return []
    }
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return [`${where}: expected ${expected.length} items, got ${JSON.stringify(actual)}`]
    return expected.flatMap((item, i) => compare(item, actual[i], stands, `${where}[${i}]`))
  }
  if (expected && typeof expected === 'object') {
    if (!actual || typeof actual !== 'object') return [`${where}: expected an object, got ${JSON.stringify(actual)}`]
    const keys = (value: object) => Object.keys(value).sort().join(', ')
    if (keys(expected) !== keys(actual)) return [`${where}: expected keys ${keys(expected)}, got ${keys(actual)}`]
    return Object.entries(expected).flatMap(([key, value]) => compare(value, (actual as Record<string, unknown>)[key], stands, `${where}.${key}`))
  }
  return Object.is(expected, actual) ? [] : [`${where}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`]
}
