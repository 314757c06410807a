import type { Struct } from 'superstruct'

/**
 * A fast path for validating request bodies, kept because it measurably pays (bench/README.md,
 * "Copies of library code kept for speed"): superstruct walks a body with nested generators; the
 * field structs of this package (text, flag, phone, ...) declare here a plain function doing
 * exactly what `validate(value, struct, { coerce: true })` does for them. A `type({...})` struct
 * whose fields all have one compiles into one function. It only ever says "valid, here is the
 * coerced value" or "not sure": every refusal is left to superstruct, so error answers and their
 * logging stay exactly superstruct's. test/http/fast-check.test.ts holds each fast check to
 * superstruct's result on thousands of generated values.
 */

/** The answer of a fast check that does not accept the value (superstruct then decides). */
export const UNSURE: unique symbol = Symbol('unsure')

/** What `validate(value, struct, { coerce: true })` gives for an accepted value, or UNSURE. */
export type FastCheck = (value: unknown) => unknown

const checks = new WeakMap<Struct<any, any>, FastCheck>()

/** Declare the fast check of a struct (it must agree with the struct: see the test). Returns the struct. */
export function withFastCheck<S extends Struct<any, any>>(struct: S, check: FastCheck): S {
  checks.set(struct, check)
  return struct
}

/** The fast check declared for this very struct object, if any. */
export function fastCheckOf(struct: Struct<any, any>): FastCheck | undefined {
  return checks.get(struct)
}

/**
 * One function for a `type({...})` struct whose fields all have fast checks (superstruct's `type`:
 * a non-array object, copied, unknown keys kept, each field coerced and checked), else undefined.
 */
export function compileBodyCheck(struct: Struct<any, any>): FastCheck | undefined {
  if (struct.type !== 'type' || !struct.schema) return undefined
  const fields = Object.entries(struct.schema as Record<string, Struct<any, any>>).map(([name, field]) => [name, fastCheckOf(field)] as const)
  if (fields.some(([, check]) => check === undefined)) return undefined
  return value => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return UNSURE
    const copy: Record<string, unknown> = { ...value }
    for (const [name, check] of fields) {
      const coerced = check!(copy[name])
      if (coerced === UNSURE) return UNSURE
      if (coerced !== undefined || name in copy) copy[name] = coerced
    }
    return copy
  }
}
