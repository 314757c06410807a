import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { validate, type Struct } from 'superstruct'
import { compileBodyCheck } from '../../src/schema/fast-check.ts'
import { sendButtons, sendCarousel } from '../../src/operations/interactive.ts'
import { createGroup } from '../../src/operations/groups.ts'
import { FRIEND, assertError, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'

/**
 * Validation runs before authentication, so its work is anyone's to ask for: a list past its
 * maximum (buttons, cards, a card's buttons, `usuarios`) is refused 401 `validation.required` before
 * any of its items is read or parsed, and so is a `to` or phone far too long to be one. No timing:
 * the items count their reads (getters, toString), the strings count the scans over them.
 */
const test = suite<{ g: SendingGateway }>('list limits: a list past its maximum is refused before its items are read')
test.before(async ctx => {
  ctx.g = await sendingGateway({ rateLimit: false })
})
test.after(async ctx => {
  await ctx.g.stop()
})

const REQUIRED = 'validation.required'
const keys = { appkey: 'loja', authkey: 'k'.repeat(32) }

/** What the router does (select-operation.ts): the fast check when there is one, then superstruct. */
function check(schema: Struct<any, any>, fields: Record<string, unknown>): boolean {
  compileBodyCheck(schema)?.(fields)
  const [error] = validate(fields, schema, { coerce: true })
  return error === undefined
}

/** `n` items made by `make`, each counting the reads of its fields (and its text, for `usuarios`) in `reads.count`. */
function counted(n: number, make: (i: number) => Record<string, unknown>, reads: { count: number }): unknown[] {
  return Array.from({ length: n }, (_, i) => {
    const item = make(i)
    const spy: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(item)) Object.defineProperty(spy, key, { enumerable: true, get: () => (reads.count++, value) })
    return spy
  })
}

const reply = (i: number) => ({ type: 'replyButton', displaytext: `Opção ${i}`, id: `o${i}` })
const cardButton = (i: number) => ({ type: 'quickReplyButton', displaytext: `Botão ${i}`, id: `b${i}` })
const card = (buttons: unknown[] = [cardButton(1)]) => ({ image_url: 'https://example.com/a.png', title: 'Pizza', buttons })

test('buttons, cards and a card’s buttons: at the maximum every item is read; past it, none', () => {
  const cases: [name: string, schema: Struct<any, any>, max: number, body: (items: unknown[]) => Record<string, unknown>, item: (i: number) => any][] = [
    ['buttons', sendButtons.schema, 3, buttons => ({ ...keys, to: FRIEND, message: 'Escolha', buttons }), reply],
    ['cards', sendCarousel.schema, 10, cards => ({ ...keys, to: FRIEND, message: 'Ofertas', cards }), () => card()],
    ['card buttons', sendCarousel.schema, 2, buttons => ({ ...keys, to: FRIEND, message: 'Ofertas', cards: [card(buttons)] }), cardButton],
  ]
  for (const [name, schema, max, body, item] of cases) {
    const atMax = { count: 0 }
    assert.equal(check(schema, body(counted(max, item, atMax))), true, `${name}: ${max} items are valid`)
    assert.ok(atMax.count >= max, `${name}: the items at the maximum are read (${atMax.count})`)
    for (const n of [max + 1, 10_000]) {
      const past = { count: 0 }
      assert.equal(check(schema, body(counted(n, item, past))), false, `${name}: ${n} items are refused`)
      assert.equal(past.count, 0, `${name}: ${n} items, none read`)
    }
  }
})

test('usuarios: 1 023 entries are parsed; past 1 023 none is (entries counted by the trims: parsing trims each entry)', () => {
  const group = (usuarios: unknown) => ({ ...keys, message: 'Grupo', usuarios, criarGrupo: 'true' })
  const phones = (n: number) => Array.from({ length: n }, (_, i) => String(5511900000000 + i))
  const trimsOf = (usuarios: unknown, valid: boolean) =>
    countCalls(String.prototype, 'trim', () => assert.equal(check(createGroup.schema, group(usuarios)), valid))
  assert.ok(trimsOf(phones(1023), true) >= 1023)
  for (const n of [1024, 100_000]) {
    assert.ok(trimsOf(phones(n), false) < 10, `${n} entries as a list: none parsed`)
    const trims = trimsOf(phones(n).join('-'), false)
    assert.ok(trims < 10, `${n} entries as text: not parsed one by one (${trims} trims; parsing trims each entry)`)
  }
})

test('a `to` or a phone far too long is refused without a replace over all of it; a long spelling of a real number still counts', () => {
  const spaced = '5 '.repeat(500_000)
  const schemas: [string, Struct<any, any>, Record<string, unknown>][] = [
    ['to', sendButtons.schema, { ...keys, message: 'Escolha', buttons: [reply(1)], to: spaced }],
    ['call button', sendButtons.schema, { ...keys, to: FRIEND, message: 'Escolha', buttons: [{ type: 'callButton', displaytext: 'Ligar', action: spaced }] }],
  ]
  for (const [name, schema, fields] of schemas) {
    let scanned = 0
    const original = RegExp.prototype[Symbol.replace]
    RegExp.prototype[Symbol.replace] = function (this: RegExp, s: string, ...rest: any[]) {
      scanned += s.length
      return (original as any).call(this, s, ...rest)
    } as any
    try {
      assert.equal(check(schema, fields), false, `${name}: refused`)
    } finally {
      RegExp.prototype[Symbol.replace] = original
    }
    assert.ok(scanned < 10_000, `${name}: ${scanned} characters replaced over`)
  }
  const padded = `5${' '.repeat(100_000)}5119888800 02`
  assert.equal(check(sendButtons.schema, { ...keys, message: 'Escolha', buttons: [reply(1)], to: padded }), true, 'a padded number is still a number')
})

test('over HTTP, with or without keys: a list past its maximum is 401 validation.required, as before', async ({ g }) => {
  const buttons = Array.from({ length: 5_000 }, (_, i) => reply(i))
  const cards = Array.from({ length: 11 }, () => card())
  const phones = (n: number) => Array.from({ length: n }, (_, i) => String(5511900000000 + i))
  const sends = [
    () => g.send({ to: FRIEND, message: 'Escolha', buttons }),
    () => g.send({ to: FRIEND, message: 'Escolha', buttons: JSON.stringify(buttons) }, 'form'),
    () => g.t.post('/api/create-message', { to: FRIEND, message: 'Escolha', buttons }),
    () => g.send({ to: FRIEND, message: 'Ofertas', cards }),
    () => g.send({ to: FRIEND, message: 'Ofertas', cards: [card([1, 2, 3].map(cardButton))] }),
    () => g.groups({ message: 'Grupo', usuarios: phones(5_000).join('-'), criarGrupo: 'true' }),
    () => g.groups({ message: 'Grupo', usuarios: phones(1024) }),
    () => g.t.post('/api/groups', { message: 'Grupo', usuarios: phones(5_000).join(','), criarGrupo: 'true' }),
    () => g.send({ to: '5 '.repeat(50_000), message: 'oi' }),
  ]
  for (const send of sends) assertError(await send(), 401, REQUIRED)
  // Entries are counted as given: 1 023 numbers and one of them again are 1 024 (docs/decisions.md, Limits).
  assertError(await g.groups({ message: 'Grupo', usuarios: [...phones(1023), phones(1)[0]].join('-'), criarGrupo: 'true' }), 401, REQUIRED)
})

/** How many times `object[method]` is called while `body` runs. */
function countCalls(object: any, method: string, body: () => void): number {
  const original = object[method]
  let calls = 0
  object[method] = function (this: unknown, ...args: unknown[]) {
    calls++
    return original.apply(this, args)
  }
  try {
    body()
  } finally {
    object[method] = original
  }
  return calls
}

test.run()
