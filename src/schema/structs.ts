import * as superstruct from 'superstruct'
import { Struct } from 'superstruct'
import { isBoolean, isNumber, isString } from './coerce-when.ts'

export { any, dynamic, nullable, optional, refine, Struct, type Infer } from 'superstruct'

/**
 * superstruct's structs whose refusal names the value, each the same struct (type, schema, entries,
 * coercion, what it accepts) with a refusal message of bounded size. superstruct's own print the
 * refused value whole into the StructError's message (`print` in its dist: a string JSON-escaped, an
 * array joined), and validation runs before authentication: a 19 MB string in a literal, enum or flag
 * field, or a huge list where text is expected, cost anyone 0.05-0.1 s of CPU per request for a
 * message nobody reads (the router logs the field's path only). Schemas import their structs from
 * here, never from superstruct: test/operations/refusal-messages.test.ts sends huge values to every
 * field of every operation, and holds each struct here to superstruct's on the same values.
 */

/** superstruct's `string()`. */
export const string: typeof superstruct.string = () => quiet(superstruct.string(), isString, 'a string')

/** superstruct's `boolean()`. */
export const boolean: typeof superstruct.boolean = () => quiet(superstruct.boolean(), isBoolean, 'a value of type `boolean`')

/** superstruct's `integer()`. */
export const integer: typeof superstruct.integer = () => quiet(superstruct.integer(), v => isNumber(v) && Number.isInteger(v), 'an integer')

/** superstruct's `never()`. */
export const never: typeof superstruct.never = () => quiet(superstruct.never(), () => false, 'no value')

/** superstruct's `literal(constant)`. */
export const literal = ((constant: string | number | boolean) =>
  quiet(superstruct.literal(constant), v => v === constant, `the literal \`${describe(constant)}\``)) as typeof superstruct.literal

/** superstruct's `enums(values)`. */
export const enums = ((values: readonly (string | number)[]) =>
  quiet(superstruct.enums(values as string[]), v => values.includes(v as string), `one of \`${values.map(describe).join()}\``)) as typeof superstruct.enums

/** superstruct's `array(item)`. */
export const array = (<T>(item: Struct<T>) => quiet(superstruct.array(item), Array.isArray, 'an array value')) as typeof superstruct.array

/** superstruct's `type(schema)`. */
export const type: typeof superstruct.type = schema => quiet(superstruct.type(schema), isNonArrayObject, 'an object')

/** superstruct's `object(schema)`; a key the schema does not name is refused by `never()` above. */
export const object = (<S extends Record<string, Struct<any, any>>>(schema: S) => {
  const struct = quiet(superstruct.object(schema), isNonArrayObject, 'an object')
  const unknown = never()
  return new Struct({
    ...struct,
    *entries(value, context) {
      for (const [key, item, field] of struct.entries(value, context)) yield [key, item, field.type === 'never' ? unknown : field]
    },
  })
}) as typeof superstruct.object

// --- Internal helpers ---

/** `struct` refusing what `accepts` does not accept, with a message that describes the value in bounded size. */
function quiet<S>(struct: S, accepts: (value: unknown) => boolean, expected: string): S {
  return new Struct({ ...(struct as Struct<any, any>), validator: value => accepts(value) || `Expected ${expected}, but received: ${describe(value)}` }) as S
}

/** A value as superstruct prints it, but a string past 64 characters, a list or an object only by its kind and size. */
function describe(value: unknown): string {
  if (isString(value)) return value.length <= 64 ? JSON.stringify(value) : `a string of ${value.length} characters`
  if (Array.isArray(value)) return `a list of ${value.length} items`
  return typeof value === 'object' && value !== null ? 'an object' : String(value)
}

function isNonArrayObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
