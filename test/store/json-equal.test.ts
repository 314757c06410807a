import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { jsonEqual } from '../../src/store/json-equal.ts'

const equal = suite('jsonEqual')

equal('objects are equal with their keys in any order, at any depth', () => {
  assert.ok(jsonEqual({ a: 1, b: { c: [1, { d: 'x' }], e: null } }, { b: { e: null, c: [1, { d: 'x' }] }, a: 1 }))
})

equal('a property whose value is undefined is no key, as in JSON', () => {
  assert.ok(jsonEqual({ a: 1, b: undefined }, { a: 1 }))
  assert.ok(jsonEqual({ a: 1 }, { a: 1, b: undefined }))
  assert.not.ok(jsonEqual({ a: 1, b: undefined }, { a: 1, b: null }))
})

equal('an undefined array item counts as null, as in JSON', () => {
  assert.ok(jsonEqual([1, undefined], [1, null]))
})

equal('types must match: number and string, array and object, null and missing differ', () => {
  assert.not.ok(jsonEqual(1, '1'))
  assert.not.ok(jsonEqual([], {}))
  assert.not.ok(jsonEqual({ 0: 'a' }, ['a']))
  assert.not.ok(jsonEqual(null, undefined))
  assert.not.ok(jsonEqual({ a: null }, {}))
  assert.not.ok(jsonEqual(true, 1))
})

equal('arrays compare in order and by length', () => {
  assert.not.ok(jsonEqual([1, 2], [2, 1]))
  assert.not.ok(jsonEqual([1], [1, 1]))
  assert.ok(jsonEqual([], []))
})

equal('a value equals its own JSON round trip', () => {
  const value = { 10: 'ten', 2: 'two', z: [{ y: 1.5, x: -0 }], ключ: 'olá 🚀', empty: {} }
  assert.ok(jsonEqual(value, JSON.parse(JSON.stringify(value))))
})

equal('numbers JSON cannot hold are null, as JSON writes them', () => {
  assert.ok(jsonEqual(NaN, NaN))
  assert.ok(jsonEqual({ a: NaN }, { a: null }))
  assert.ok(jsonEqual([Infinity], [-Infinity]))
  assert.not.ok(jsonEqual({ a: NaN }, {}))
  assert.not.ok(jsonEqual(NaN, 0))
})

equal('an object with toJSON is its JSON form: a Date is its text', () => {
  const at = new Date(1_700_000_000_000)
  assert.ok(jsonEqual({ at }, { at: at.toISOString() }))
  assert.ok(jsonEqual({ at }, JSON.parse(JSON.stringify({ at }))))
  assert.not.ok(jsonEqual({ at }, { at: new Date(0) }), 'two dates are not equal for having no keys')
  assert.not.ok(jsonEqual(at, {}))
})

equal.run()
