import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { nestFields } from '../../src/schema/nested-fields.ts'

const test = suite('nestFields (bracketed multipart field names)')

const plain = (value: unknown) => JSON.parse(JSON.stringify(value))
const nest = (fields: Record<string, unknown> | [string, unknown][]) => plain(nestFields(Array.isArray(fields) ? fields : Object.entries(fields)))

test('nestFields folds name[0][key] fields into nested objects and keeps plain fields', () => {
  const nested = nest({ to: '55', 'buttons[0][type]': 'replyButton', 'buttons[0][displaytext]': 'Sim', 'buttons[1][type]': 'urlButton' })
  assert.deepEqual(nested, { to: '55', buttons: { 0: { type: 'replyButton', displaytext: 'Sim' }, 1: { type: 'urlButton' } } })
})

test('nestFields appends name[] values in order', () => {
  assert.deepEqual(nest({ 'tags[]': 'a' }), { tags: { 0: 'a' } })
  assert.deepEqual(
    nest([
      ['tags[]', 'a'],
      ['tags[]', 'b'],
    ]),
    { tags: { 0: 'a', 1: 'b' } },
  )
})

test('nestFields makes a name given more than once a list of its values in order, as qs does', () => {
  assert.deepEqual(
    nest([
      ['buttons', '[]'],
      ['buttons[0][type]', 'x'],
    ]),
    { buttons: ['[]', { type: 'x' }] },
  )
  assert.deepEqual(
    nest([
      ['message[x]', '1'],
      ['message', 'oi'],
    ]),
    { message: [{ x: '1' }, 'oi'] },
  )
  assert.deepEqual(
    nest([
      ['message', 'a'],
      ['message', 'b'],
    ]),
    { message: ['a', 'b'] },
  )
  assert.deepEqual(
    nest([
      ['message[]', 'a'],
      ['message', 'oi'],
    ]),
    { message: ['a', 'oi'] },
  )
  assert.deepEqual(
    nest([
      ['message', 'oi'],
      ['message[]', 'a'],
      ['message[]', 'b'],
    ]),
    { message: ['oi', 'a', 'b'] },
  )
})

test('nestFields drops __proto__, constructor and prototype segments and nesting deeper than 5', () => {
  const nested = nest({
    '__proto__[a]': '1',
    'x[__proto__][b]': '1',
    'y[constructor][prototype][c]': '1',
    'z[1][2][3][4][5][6]': 'deep',
    'ok[1][2][3][4][5]': 'fine',
  })
  assert.deepEqual(nested, { ok: { 1: { 2: { 3: { 4: { 5: 'fine' } } } } } })
  assert.equal(({} as Record<string, unknown>).a, undefined)
  assert.equal(({} as Record<string, unknown>).b, undefined)
})

test('nestFields leaves names that are not well-formed brackets as they are', () => {
  assert.deepEqual(nest({ 'a[b': '1', 'c]d': '2', '[e]': '3' }), { 'a[b': '1', 'c]d': '2', '[e]': '3' })
})

test.run()
