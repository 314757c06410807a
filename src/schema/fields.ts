import { array, boolean, literal, optional, refine, string, Struct } from './structs.ts'
import { coerceWhen, isNumber, isScalar, isString, isStringOrNumber } from './coerce-when.ts'
import { UNSURE, withFastCheck, type FastCheck } from './fast-check.ts'
import { documentStruct } from './struct-schema.ts'

/**
 * Field types of the wire format. Every request field is a JSON string, but clients also send
 * numbers and booleans; numbers are read as their decimal text and flags accept the spellings of
 * DESIGN.md (true: "true", true, "1"; false: "false", false, "0").
 */

/** Longest value of an ordinary field (names, keys, ids); text content has its own limit. */
const MAX_FIELD = 1024

/** A required, non-blank string of at most `max` characters (code points, as JSON Schema's maxLength counts them; numbers are taken as their text). */
export function text(max = MAX_FIELD): Struct<string, null> {
  const struct = refine(
    coerceWhen(string(), isNumber, n => String(n)),
    'text',
    value => (fitsLength(value, max) && value.trim().length > 0) || `expected 1 to ${max} characters`,
  )
  return withFastCheck(struct, textCheck(max))
}

/** An optional string; null or a blank value counts as absent. */
export function optionalText(max = MAX_FIELD): Struct<string | undefined, null> {
  const check = textCheck(max)
  const struct = optional(coerceWhen(text(max), isAbsent, () => undefined) as Struct<string, null>)
  return withFastCheck(struct, value => (isAbsent(value) ? undefined : check(value)))
}

/** A flag: true or false in any accepted spelling. */
export function flag(): Struct<boolean, null> {
  return withFastCheck(coerceWhen(boolean(), isStringOrNumber, parseFlag), flagCheck)
}

/** A flag that must be true (distinguishing fields such as `conecteQR`). */
export function trueFlag(): Struct<true, true> {
  return withFastCheck(coerceWhen(literal(true), isScalar, parseFlag), value => (isScalar(value) && parseFlag(value) === true ? true : UNSURE))
}

/** A flag that must be false (the fixed `message: "false"` of several operations). */
export function falseFlag(): Struct<false, false> {
  return withFastCheck(coerceWhen(literal(false), isScalar, parseFlag), value => (isScalar(value) && parseFlag(value) === false ? false : UNSURE))
}

/** An optional flag (absent, null or blank: undefined). */
export function optionalFlag(): Struct<boolean | undefined, null> {
  const struct = optional(coerceWhen(flag(), isAbsent, () => undefined))
  return withFastCheck(struct, value => (isAbsent(value) ? undefined : flagCheck(value)))
}

/** A phone number: digits with the country code after removing `+`, spaces, dots, dashes and parentheses. */
export function phone(): Struct<string, null> {
  const check = textCheck(32)
  const struct = refine(
    coerceWhen(text(32), isStringOrNumber, v => stripPhone(String(v))),
    'phone',
    v => /^\d{8,15}$/.test(v) || 'expected 8 to 15 digits',
  )
  withFastCheck(struct, value => {
    const digits = check(isStringOrNumber(value) ? stripPhone(String(value)) : value)
    return typeof digits === 'string' && /^\d{8,15}$/.test(digits) ? digits : UNSURE
  })
  return documentStruct(struct, { description: 'Phone number with the country code: 8 to 15 digits once +, spaces, dots, dashes and parentheses are removed.' })
}

/**
 * superstruct's `array(item)` of `min` to `max` items, refused ('size') before any item is
 * validated when the length is outside: validation runs before authentication, so a huge list is
 * anyone's to send (docs/limits.md).
 */
export function sizedArray<T>(item: Struct<T, any>, min: number, max: number): Struct<T[], any> {
  const items = array(item)
  const fits = (value: unknown) => !Array.isArray(value) || (value.length >= min && value.length <= max)
  const sized = new Struct({ ...items, entries: (value, context) => (fits(value) ? items.entries(value, context) : []) })
  return refine(sized, 'size', value => fits(value) || `expected ${min} to ${max} items`)
}

/**
 * `s` without `+`, spaces, dots, dashes and parentheses (a phone number's spelling), in one scan
 * that stops once 33 characters are kept: a longer result is no phone number either way, and a huge
 * value is not rewritten whole.
 */
export function stripPhone(s: string): string {
  const kept = /[^\s().+-]{1,33}/g
  let out = ''
  for (let match: RegExpExecArray | null; out.length <= 32 && (match = kept.exec(s));) out += match[0]
  return out
}

/** Read a flag spelling; anything unknown is returned as is (and then fails validation). */
export function parseFlag(value: unknown): unknown {
  if (typeof value === 'boolean') return value
  const trimmed = String(value).trim()
  const s = trimmed.length > 5 ? '' : trimmed.toLowerCase() // no spelling is longer: a huge value is not lower-cased
  if (s === 'true' || s === '1') return true
  if (s === 'false' || s === '0') return false
  return value
}

/** A field's value that counts as absent: none, null or blank text (an optional field, and a distinguishing field when the operation is chosen). */
export function isAbsent(value: unknown): value is string | null | undefined {
  return value === undefined || value === null || (isString(value) && value.trim() === '')
}

// --- Internal helpers ---

/** text(max) as a fast check. */
function textCheck(max: number): FastCheck {
  return value => {
    const s = isNumber(value) ? String(value) : value
    if (typeof s !== 'string') return UNSURE
    return fitsLength(s, max) && s.trim().length > 0 ? s : UNSURE
  }
}

/**
 * Whether `s` has at most `max` characters, counted as code points (an emoji outside the BMP is one,
 * though two UTF-16 units), as the OpenAPI document's maxLength counts them; counted no further than
 * needed, and not at all when the UTF-16 length settles it.
 */
export function fitsLength(s: string, max: number): boolean {
  if (s.length <= max) return true
  if (s.length > 2 * max) return false
  let count = 0
  for (const _ of s) if (++count > max) return false
  return true
}

/** flag() as a fast check. */
function flagCheck(value: unknown): unknown {
  const parsed = isStringOrNumber(value) ? parseFlag(value) : value
  return typeof parsed === 'boolean' ? parsed : UNSURE
}
