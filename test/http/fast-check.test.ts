import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { validate, type Struct } from 'superstruct'
import { compileBodyCheck, fastCheckOf, UNSURE } from '../../src/schema/fast-check.ts'
import { falseFlag, flag, optionalFlag, optionalText, phone, text, trueFlag } from '../../src/schema/fields.ts'
import { recipient } from '../../src/operations/messaging-fields.ts'
import { operationTable } from '../../src/operations/table.ts'
import type { PathEntry } from '../../src/operations/operation.ts'
import { seededRandom } from '../helpers/random.ts'

/**
 * The fast checks must agree with superstruct: whenever one accepts a value, superstruct accepts it
 * too and coerces it to the same thing. (A fast check may decline a value superstruct accepts: the
 * router then asks superstruct.) Values: hand-picked edge cases plus seeded random ones.
 */
const test = suite('fast body checks agree with superstruct')

const seed = Number(process.env.FAST_CHECK_SEED ?? Date.now() % 2 ** 31)
const random = seededRandom(seed)
const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]

const EDGE: unknown[] = [
  undefined,
  null,
  '',
  ' ',
  ' \t\n',
  'a',
  'abc',
  ' abc ',
  'x'.repeat(40),
  'x'.repeat(300),
  'x'.repeat(1100),
  0,
  1,
  -1,
  3.5,
  1e21,
  12345678,
  5511988887777,
  true,
  false,
  'true',
  'TRUE',
  ' false ',
  '1',
  '0',
  'yes',
  [],
  ['a'],
  {},
  { a: 1 },
  '+55 (11) 98888-7777',
  '5511988887777',
  '5511988887777@s.whatsapp.net',
  '120363021234@g.us',
  '1234567@lid',
  '123',
  '55 11 9',
  'abc@g.us',
  '2030-01-01 10:00:00',
  'ééé',
  '+',
]

function randomValue(): unknown {
  const kind = random()
  if (kind < 0.5) return pick(EDGE)
  if (kind < 0.6) return Math.floor(random() * 10 ** Math.floor(random() * 16))
  const alphabet = pick(['0123456789', '0123456789 +-().', 'abcxyz ', '0123456789@gus.lidwhatsapp', ' \t'])
  return Array.from({ length: Math.floor(random() * 24) }, () => pick([...alphabet])).join('')
}

const fields: Record<string, Struct<any, any>> = {
  'text(5)': text(5),
  'text()': text(),
  'optionalText(10)': optionalText(10),
  'flag()': flag(),
  'trueFlag()': trueFlag(),
  'falseFlag()': falseFlag(),
  'optionalFlag()': optionalFlag(),
  'phone()': phone(),
  'recipient()': recipient(),
}

for (const [name, struct] of Object.entries(fields)) {
  test(`${name} (seed ${seed})`, () => {
    const check = fastCheckOf(struct)
    assert.ok(check, 'the field declares a fast check')
    let accepted = 0
    for (let i = 0; i < 3000; i++) {
      const value = i < EDGE.length ? EDGE[i] : randomValue()
      const fast = check!(value)
      if (fast === UNSURE) continue
      accepted++
      const [error, coerced] = validate(value, struct, { coerce: true })
      assert.is(error, undefined, `${name} accepted ${JSON.stringify(value)} but superstruct refuses it`)
      assert.equal(fast, coerced, `${name} of ${JSON.stringify(value)}`)
    }
    assert.ok(accepted > 20, `the fast check accepted too few values to prove anything (${accepted})`)
  })
}

test(`whole bodies of every operation with a compiled check (seed ${seed})`, () => {
  const operations = (operationTable as readonly PathEntry[]).flatMap(entry => [...entry.operations, ...(entry.fallback ? [entry.fallback] : [])])
  const compiled = operations.filter(operation => compileBodyCheck(operation.schema))
  assert.ok(
    compiled.some(operation => operation.name === 'sendText'),
    'sending a text takes the fast path',
  )
  for (const operation of compiled) {
    const check = compileBodyCheck(operation.schema)!
    const names = Object.keys(operation.schema.schema as object)
    let accepted = 0
    for (let i = 0; i < 2000; i++) {
      const body: Record<string, unknown> = {}
      for (const name of names) if (random() < 0.9) body[name] = randomValue()
      if (random() < 0.3) body.extra = randomValue()
      const fast = check(body)
      if (fast === UNSURE) continue
      accepted++
      const [error, coerced] = validate(body, operation.schema, { coerce: true })
      assert.is(error, undefined, `${operation.name} accepted ${JSON.stringify(body)} but superstruct refuses it`)
      assert.equal(fast, coerced, `${operation.name} of ${JSON.stringify(body)}`)
    }
    // Random bodies rarely satisfy every required field of the bigger operations; a text's do often.
    assert.ok(accepted > 50 || operation.name !== 'sendText', `sendText accepted only ${accepted} random bodies`)
  }
})

test("a body the fast check declines still gets superstruct's answer", () => {
  const sendText = (operationTable as readonly PathEntry[]).find(entry => entry.path === '/api/create-message')!.fallback!
  const check = compileBodyCheck(sendText.schema)!
  const body = { appkey: 'loja', authkey: 'k', to: '5511988887777', message: '   ' }
  assert.is(check(body), UNSURE)
  assert.ok(validate(body, sendText.schema, { coerce: true })[0], 'superstruct refuses it too')
  assert.equal(check({ ...body, message: 42 }), { ...body, message: '42' })
  assert.is(check(['not', 'an', 'object']), UNSURE)
})

test.run()
