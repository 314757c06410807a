import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { type, validate } from 'superstruct'
import { falseFlag, flag, optionalFlag, optionalText, phone, text, trueFlag } from '../../src/schema/fields.ts'

const fields = suite('wire field types')
const read = (struct: any, value: unknown) => {
  const [error, result] = validate({ v: value }, type({ v: struct }), { coerce: true })
  return error ? 'invalid' : result.v
}

fields('flag accepts "true"/true/"1" and "false"/false/"0", case-insensitively', () => {
  for (const v of ['true', true, '1', 1, 'TRUE', ' true ']) assert.is(read(flag(), v), true, String(v))
  for (const v of ['false', false, '0', 0, 'False']) assert.is(read(flag(), v), false, String(v))
  for (const v of ['yes', 'sim', '', null, undefined, {}, []]) assert.is(read(flag(), v), 'invalid', String(v))
})

fields('trueFlag and falseFlag accept only their value', () => {
  assert.is(read(trueFlag(), '1'), true)
  assert.is(read(trueFlag(), 'false'), 'invalid')
  assert.is(read(falseFlag(), 'false'), false)
  assert.is(read(falseFlag(), 'true'), 'invalid')
  assert.is(read(falseFlag(), undefined), 'invalid')
})

fields('text requires a non-blank string within the limit and reads numbers as text', () => {
  assert.is(read(text(), 'abc'), 'abc')
  assert.is(read(text(), 5511), '5511')
  assert.is(read(text(), '   '), 'invalid')
  assert.is(read(text(), ''), 'invalid')
  assert.is(read(text(3), 'abcd'), 'invalid')
  assert.is(read(text(), { a: 1 }), 'invalid')
  assert.is(read(text(), ['a']), 'invalid')
  assert.is(read(text(), true), 'invalid')
})

fields('optionalText treats blank as absent', () => {
  assert.is(read(optionalText(), undefined), undefined)
  assert.is(read(optionalText(), '  '), undefined)
  assert.is(read(optionalText(), 'x'), 'x')
  assert.is(read(optionalText(2), 'xyz'), 'invalid')
  assert.is(read(optionalFlag(), ''), undefined)
  assert.is(read(optionalFlag(), 'true'), true)
})

fields('phone strips +, spaces, dots, dashes and parentheses and wants 8 to 15 digits', () => {
  assert.is(read(phone(), '+55 (11) 99999-0000'), '5511999990000')
  assert.is(read(phone(), 5511999990000), '5511999990000')
  assert.is(read(phone(), '+1234'), 'invalid')
  assert.is(read(phone(), '55abc11999990000'), 'invalid')
  assert.is(read(phone(), '1234567890123456'), 'invalid')
})

fields.run()
