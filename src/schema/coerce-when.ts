import { Struct } from 'superstruct'

/**
 * superstruct's `coerce(struct, condition, coercer)` with a plain predicate as the condition. The
 * original tests the condition with `is()`, which builds a StructError (and captures a stack) each
 * time the condition does not hold: on every text field, whose condition is "is a number". Kept
 * because it measurably pays: bench/README.md, "Copies of library code kept for speed".
 */
export function coerceWhen<T, S, C>(struct: Struct<T, S>, condition: (value: unknown) => value is C, coercer: (value: C) => unknown): Struct<T, S> {
  return new Struct({
    ...struct,
    coercer: (value, context) => struct.coercer(condition(value) ? coercer(value) : value, context),
  })
}

/** superstruct's `string()` as a predicate. */
export const isString = (value: unknown): value is string => typeof value === 'string'
/** superstruct's `number()` as a predicate (NaN is not a number there). */
export const isNumber = (value: unknown): value is number => typeof value === 'number' && !Number.isNaN(value)
/** superstruct's `boolean()` as a predicate. */
export const isBoolean = (value: unknown): value is boolean => typeof value === 'boolean'
/** `union([string(), number()])` as a predicate. */
export const isStringOrNumber = (value: unknown): value is string | number => isString(value) || isNumber(value)
/** `union([string(), number(), boolean()])` as a predicate. */
export const isScalar = (value: unknown): value is string | number | boolean => isStringOrNumber(value) || isBoolean(value)
/** `any()` as a predicate. */
export const isAnything = (value: unknown): value is unknown => true

/**
 * A keyword's spelling (`registrar`, `excluir`, `chat`) trimmed and lower-cased; past 64 characters
 * only trimmed: it matches no keyword either way (lower-casing never shortens text), and a huge value
 * is not lower-cased whole.
 */
export function lowerKeyword(s: string): string {
  const trimmed = s.trim()
  return trimmed.length > 64 ? trimmed : trimmed.toLowerCase()
}
