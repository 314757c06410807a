import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { nestFields } from '../../src/schema/nested-fields.ts'

const test = suite('nestFields (bracketed multipart field names)')

const plain = (value: unknown) => JSON.parse(JSON.stringify(value))

test('nestFields folds name[0][key] fields into nested objects and keeps plain fields', () => {
  const nested = nestFields({ to: '55', 'buttons[0][type]': 'replyButton', 'buttons[0][displaytext]': 'Sim', 'buttons[1][type]': 'urlButton' })
  assert.deepEqual(plain(nested), { to: '55', buttons: { 0: { type: 'replyButton', displaytext: 'Sim' }, 1: { type: 'urlButton' } } })
})

test('nestFields appends name[] values in order', () => {
  assert.deepEqual(plain(nestFields({ 'tags[]': 'a' })), { tags: { 0: 'a' } })
})

test('nestFields lets a plain field win over bracketed ones of the same name', () => {
  assert.deepEqual(plain(nestFields({ buttons: '[]', 'buttons[0][type]': 'x' })), { buttons: '[]' })
})

test('nestFields drops __proto__, constructor and prototype segments and nesting deeper than 5', () => {
  const nested = nestFields({
    '__proto__[a]': '1',
    'x[__proto__][b]': '1',
    'y[constructor][prototype][c]': '1',
    'z[1][2][3][4][5][6]': 'deep',
    'ok[1][2][3][4][5]': 'fine',
  })
  assert.deepEqual(plain(nested), { ok: { 1: { 2: { 3: { 4: { 5: 'fine' } } } } } })
  assert.equal(({} as Record<string, unknown>).a, undefined)
  assert.equal(({} as Record<string, unknown>).b, undefined)
})

test('nestFields leaves names that are not well-formed brackets as they are', () => {
  assert.deepEqual(plain(nestFields({ 'a[b': '1', 'c]d': '2', '[e]': '3' })), { 'a[b': '1', 'c]d': '2', '[e]': '3' })
})

test.run()
