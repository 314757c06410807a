import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { array, boolean, enums, literal, nullable, object, optional, string, type } from 'superstruct'
import { documentStruct, objectFields, structSchema } from '../../src/schema/struct-schema.ts'
import { falseFlag, flag, optionalText, phone, text, trueFlag } from '../../src/schema/fields.ts'
import { button, list } from '../../src/operations/messaging-fields.ts'

const walk = suite('structSchema (superstruct to JSON Schema)')

walk('tells required fields from optional ones by validating undefined', () => {
  const fields = objectFields(type({ to: text(), message: optionalText(), webhook: optional(string()) }))
  assert.equal(
    fields.map(field => [field.name, field.required]),
    [
      ['to', true],
      ['message', false],
      ['webhook', false],
    ],
  )
})

walk('finds the length limits of a text field, and that a required one may not be blank, by probing', () => {
  assert.equal(structSchema(text(64)), { type: 'string', minLength: 1, pattern: '\\S', maxLength: 64 })
  assert.equal(structSchema(optionalText(40)), { type: ['string', 'null'], maxLength: 40 })
  assert.equal(structSchema(text(Number.MAX_SAFE_INTEGER)), { type: 'string', minLength: 1, pattern: '\\S' })
})

walk('lists the spellings a coerced flag accepts', () => {
  assert.equal(structSchema(trueFlag()), { enum: [true, 'true', '1'] })
  assert.equal(structSchema(falseFlag()), { enum: [false, 'false', '0'] })
  assert.equal(structSchema(flag()), { enum: [true, false, 'true', 'false', '1', '0'] })
})

walk('describes literals, enums, nullable fields and exact objects', () => {
  assert.equal(structSchema(literal(200)), { type: 'integer', const: 200 })
  assert.equal(structSchema(literal('excluir')), { type: 'string', const: 'excluir' })
  assert.equal(structSchema(enums(['chat', 'grupo'])), { type: 'string', enum: ['chat', 'grupo'] })
  assert.equal(structSchema(nullable(string())), { type: ['string', 'null'] })
  assert.equal(structSchema(object({ ok: boolean(), tags: array(string()) })), {
    type: 'object',
    properties: { ok: { enum: [true, false] }, tags: { type: 'array', items: { type: 'string' } } },
    required: ['ok', 'tags'],
    additionalProperties: false,
  })
})

walk('keeps a documented description through optional and coerce wrappers', () => {
  const schema = structSchema(type({ phone: optional(phone()) })) as { properties: { phone: { description?: string } } }
  assert.match(schema.properties.phone.description ?? '', /country code/)
})

walk('documents the shapes a dynamic struct chooses between, and a list that may come as text', () => {
  const schema = structSchema(list(button, 1, 3)) as {
    anyOf: [{ minItems: number; maxItems: number; items: { oneOf: { properties: { type: { const: string } } }[] } }, { type: string }]
  }
  assert.is(schema.anyOf[0].minItems, 1)
  assert.is(schema.anyOf[0].maxItems, 3)
  assert.equal(
    schema.anyOf[0].items.oneOf.map(variant => variant.properties.type.const),
    ['replyButton', 'urlButton', 'callButton'],
  )
  assert.is(schema.anyOf[1].type, 'string')
})

walk('documentation attached to one struct never leaks to another', () => {
  const plain = text(10)
  documentStruct(text(10), { description: 'only mine' })
  assert.equal(structSchema(plain), { type: 'string', minLength: 1, pattern: '\\S', maxLength: 10 })
})

walk.run()
