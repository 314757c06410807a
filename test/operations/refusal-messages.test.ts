import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import pino from 'pino'
import * as superstruct from 'superstruct'
import { suite } from 'uvu'
import { validate, type Struct } from 'superstruct'
import * as quiet from '../../src/schema/structs.ts'
import { compileBodyCheck } from '../../src/schema/fast-check.ts'
import { operationTable } from '../../src/operations/table.ts'
import { operationsOf } from '../../src/operations/operation.ts'
import { FRIEND, assertError, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'

/**
 * Validation runs before authentication, so its work is anyone's to ask for: a refused field's value
 * is never printed whole into the refusal's message (superstruct's own structs JSON-escape a string
 * and join a list into it), nor lower-cased whole. No timing: the messages' length is measured and
 * the characters lower-cased are counted; over HTTP the answers are the same as ever.
 */
type Ctx = { g: SendingGateway; lines: string[] }
const test = suite<Ctx>('a refused value is never printed whole')
test.before(async ctx => {
  ctx.lines = []
  const logger = pino({ level: 'debug' }, { write: (line: string) => void ctx.lines.push(line) })
  ctx.g = await sendingGateway({ rateLimit: false, logger })
})
test.after(async ctx => {
  await ctx.g.stop()
})

const HUGE = 1_000_000
const hugeText = '"'.repeat(HUGE) // JSON-escaped: 2 000 002 characters
const hugeList = Array.from({ length: HUGE / 10 }, () => 'abcdefghij')
const button = (type: string, key: string, value: unknown) => ({ type, displaytext: 'Sim', action: 'https://example.com', id: 'a', [key]: value })
const BUTTON_TYPES = ['replyButton', 'urlButton', 'callButton', 'quickReplyButton', hugeText]
const BUTTON_KEYS = ['type', 'displaytext', 'action', 'id']
/** Huge values, alone and at each place of a list of buttons or of a card's buttons. */
const poisons: unknown[] = [
  hugeText,
  hugeList,
  [hugeText],
  [hugeList],
  ...BUTTON_TYPES.flatMap(type => BUTTON_KEYS.flatMap(key => [hugeText, hugeList].map(value => [button(type, key, value)]))),
  ...BUTTON_TYPES.flatMap(type => BUTTON_KEYS.map(key => [{ image_url: 'https://example.com/a.png', title: 'T', buttons: [button(type, key, hugeList)] }])),
  ...['image_url', 'title', 'subtitle', 'description', 'buttons'].map(key => [{ image_url: 'https://example.com/a.png', title: 'T', [key]: hugeList }]),
]

/** Run `body`, counting the characters String.prototype.toLowerCase is called on. */
function countLowered(body: () => void): number {
  const original = String.prototype.toLowerCase
  let lowered = 0
  String.prototype.toLowerCase = function (this: string) {
    lowered += this.length
    return original.call(this)
  }
  try {
    body()
  } finally {
    String.prototype.toLowerCase = original
  }
  return lowered
}

test('every field of every operation: a huge value refused is described in a short message, never lower-cased whole', () => {
  let refusals = 0
  for (const operation of operationTable.flatMap(operationsOf)) {
    const fields = Object.entries(operation.schema.schema as Record<string, Struct<any, any>>)
    for (const [name, field] of fields) {
      for (const value of poisons) {
        let error: Error | undefined
        const lowered = countLowered(() => {
          compileBodyCheck(operation.schema)?.({ [name]: value })
          ;[error] = validate(value, field, { coerce: true })
        })
        const where = `${operation.name}.${name}`
        if (error) refusals++
        assert.ok((error?.message.length ?? 0) < 1000, `${where}: a message of ${error?.message.length} characters`)
        assert.ok(lowered < 1000, `${where}: ${lowered} characters lower-cased`)
      }
    }
  }
  assert.ok(refusals > 500, `the huge values were refused (${refusals} times)`)
})

test('each struct of src/schema/structs.ts accepts, coerces and refuses (at the same path) exactly as superstruct’s own', () => {
  const pairs: [name: string, mine: Struct<any, any>, theirs: Struct<any, any>][] = [
    ['string', quiet.string(), superstruct.string()],
    ['boolean', quiet.boolean(), superstruct.boolean()],
    ['integer', quiet.integer(), superstruct.integer()],
    ['never', quiet.never() as unknown as Struct<any, null>, superstruct.never() as unknown as Struct<any, null>],
    ['literal text', quiet.literal('sim'), superstruct.literal('sim')],
    ['literal true', quiet.literal(true), superstruct.literal(true)],
    ['literal 200', quiet.literal(200), superstruct.literal(200)],
    ['enums', quiet.enums(['chat', 'grupo']), superstruct.enums(['chat', 'grupo'])],
    ['array', quiet.array(quiet.string()), superstruct.array(superstruct.string())],
    [
      'type',
      quiet.type({ a: quiet.string(), b: quiet.optional(quiet.integer()) }),
      superstruct.type({ a: superstruct.string(), b: superstruct.optional(superstruct.integer()) }),
    ],
    ['object', quiet.object({ a: quiet.string() }), superstruct.object({ a: superstruct.string() })],
  ]
  const values: unknown[] = [
    '',
    'sim',
    'chat',
    'grupo',
    'x'.repeat(100),
    0,
    1,
    200,
    1.5,
    NaN,
    Infinity,
    true,
    false,
    null,
    undefined,
    [],
    ['a'],
    [1, 'a'],
    [[]],
  ]
  values.push({}, { a: 'x' }, { a: 1 }, { a: 'x', b: 2 }, { a: 'x', b: 2.5 }, { a: 'x', c: 1 }, { b: 1 }, Object.assign(Object.create(null), { a: 'x' }))
  const outcome = (struct: Struct<any, any>, value: unknown) => {
    try {
      const [error, coerced] = validate(value, struct, { coerce: true })
      return error ? { refused: error.path.join('.'), type: error.type } : { coerced }
    } catch {
      return { refused: 'unprintable' } // superstruct's message cannot print an object without a prototype: refused all the same
    }
  }
  const shape = ({ schema }: Struct<any, any>) => (typeof schema === 'object' && schema !== null ? Object.keys(schema) : schema)
  for (const [name, mine, theirs] of pairs) {
    assert.deepEqual([mine.type, shape(mine)], [theirs.type, shape(theirs)], name)
    for (const [i, value] of values.entries()) {
      const [expected, actual] = [outcome(theirs, value), outcome(mine, value)]
      if (expected.refused === 'unprintable') assert.ok('refused' in actual, `${name}: values[${i}]`)
      else assert.deepEqual(actual, expected, `${name}: values[${i}]`)
    }
  }
})

test('the operations take their structs from src/schema/structs.ts, never from superstruct itself', () => {
  const src = new URL('../../src/', import.meta.url)
  const files = [...readdirSync(new URL('operations/', src)).map(file => `operations/${file}`), 'schema/fields.ts']
  for (const file of files) assert.ok(!readFileSync(new URL(file, src), 'utf8').includes("from 'superstruct'"), file)
})

test('over HTTP, with or without keys: a huge value in a refused field answers as before, and the debug line names only the field', async ctx => {
  const { g } = ctx
  const keys = { appkey: g.appkey, authkey: g.authkey }
  const wrongKeys = { appkey: g.appkey, authkey: 'k'.repeat(32) }
  const register = { nome: 'Ana', email: 'ana@example.com', senha: 'senha-secreta', telefone: '5511999990000', plano: '1' }
  const cases: [path: string, body: Record<string, unknown>, field: string, status: number, message: string][] = [
    ['/api/auth', { ...register, auth: hugeText }, 'auth', 401, 'validation.required'],
    ['/api/auth', { ...register, auth: hugeList }, 'auth', 401, 'validation.required'],
    ['/api/developer', { ...keys, message: 'false', to: 'loja', GerenciarLinks: hugeText }, 'GerenciarLinks', 401, 'validation.required'],
    ['/api/developer', { ...wrongKeys, message: 'false', to: 'loja', GerenciarLinks: hugeList }, 'GerenciarLinks', 401, 'validation.required'],
    ['/api/developer', { ...keys, message: 'loja', conecteQR: hugeText }, 'conecteQR', 401, 'validation.required'],
    ['/api/settings', { ...keys, message: 'loja', statusWebhook: 'true', type: hugeText }, 'type', 401, 'validation.required'],
    ['/api/settings', { ...wrongKeys, message: 'loja', type: 'chat', statusWebhook: hugeText }, 'statusWebhook', 401, 'validation.required'],
    ['/api/create-message', { ...keys, to: FRIEND, message: hugeList }, 'message', 401, 'validation.required'],
    ['/api/create-message', { ...wrongKeys, to: hugeList, message: 'oi' }, 'to', 401, 'validation.required'],
    ['/api/create-message', { ...keys, to: FRIEND, message: 'Escolha', buttons: [hugeText] }, 'buttons.0', 401, 'validation.required'],
    ['/api/v2/qrcode', { authkey: g.authkey, setAppkey: hugeList }, 'setAppkey', 400, 'Parâmetros inválidos.'],
  ]
  for (const [path, body, field, status, message] of cases) {
    ctx.lines.length = 0
    assertError(await g.t.post(path, body), status, message)
    const logged = ctx.lines.map(line => JSON.parse(line)).filter(line => line.msg === 'invalid request')
    assert.deepEqual(
      logged.map(line => line.field),
      [field],
      `${path} ${field}`,
    )
  }
})

test.run()
