import type { Struct } from 'superstruct'

/** A JSON Schema (2020-12, as OpenAPI 3.1 uses it), loosely typed. */
export type JsonSchema = Record<string, unknown> | boolean

/** What a struct cannot tell by itself, declared beside it for the generated documentation. */
interface StructDoc {
  description?: string
  /** A JSON Schema `format` (`uri`, `email`, ...). */
  format?: string
  /** The shapes a `dynamic` struct chooses between: documented as a `oneOf`. */
  variants?: Struct<any, any>[]
  /** Rewrite the walked schema (e.g. a list that may also come as text). */
  wire?: (schema: Record<string, unknown>) => JsonSchema
}

/**
 * Attach documentation to a struct; returns the struct. It survives the wrappers applied later
 * (`optional`, `coerce`, `refine`) for leaf structs, whose otherwise empty `schema` carries it.
 */
export function documentStruct<T extends Struct<any, any>>(struct: T, doc: StructDoc): T {
  if (struct.schema === null) (struct as { schema: unknown }).schema = Object.freeze({ [DOC]: doc })
  else docs.set(struct, doc)
  return struct
}

/**
 * The JSON Schema of a superstruct struct, found by walking it: `object`/`type` entries, arrays,
 * literals, enums, declared variants. Optional (`validate(undefined)` passes) and nullable
 * (`validate(null)` passes) are detected by validating, and so are the spellings a coerced flag
 * accepts and the length limits of a text field. Other refinements are not visible.
 */
export function structSchema(struct: Struct<any, any>): JsonSchema {
  const doc = docOf(struct)
  let schema = doc?.variants ? { oneOf: doc.variants.map(structSchema) } : baseSchema(struct)
  if (typeof schema !== 'object') return schema
  if (doc?.description) schema = { ...schema, description: doc.description }
  if (doc?.format) schema = { ...schema, format: doc.format }
  const wired = doc?.wire ? doc.wire(schema) : schema
  if (typeof wired === 'object' && struct.type !== 'any' && accepts(struct, null)) return withNull(wired)
  return wired
}

/** The fields of an object struct: each one's schema and whether it is required. */
export function objectFields(struct: Struct<any, any>): { name: string; schema: JsonSchema; required: boolean }[] {
  if ((struct.type !== 'object' && struct.type !== 'type') || !struct.schema) return []
  return Object.entries(struct.schema as Record<string, Struct<any, any>>).map(([name, field]) => ({
    name,
    schema: structSchema(field),
    required: !accepts(field, undefined),
  }))
}

// --- Internal helpers ---

const DOC = Symbol('zapgate.doc')
const docs = new WeakMap<Struct<any, any>, StructDoc>()

/** Flag spellings probed on boolean fields (DESIGN.md: "true", true, "1" / "false", false, "0"). */
const FLAG_SPELLINGS: unknown[] = [true, false, 'true', 'false', '1', '0']
/** Longest string probed when looking for a text field's limit (longer: no limit shown). */
const LONGEST_PROBE = 1 << 20

function docOf(struct: Struct<any, any>): StructDoc | undefined {
  const carried = struct.schema as { [DOC]?: StructDoc } | null
  return docs.get(struct) ?? (carried && typeof carried === 'object' ? carried[DOC] : undefined)
}

function baseSchema(struct: Struct<any, any>): JsonSchema {
  switch (struct.type) {
    case 'object':
    case 'type':
      return objectSchema(struct)
    case 'array':
      return { type: 'array', ...(struct.schema ? { items: structSchema(struct.schema as Struct<any, any>) } : {}) }
    case 'literal':
      return literalSchema(struct)
    case 'enums':
      return { type: 'string', enum: Object.values(struct.schema as Record<string, string>) }
    case 'boolean':
      return enumOf(FLAG_SPELLINGS.filter(value => accepts(struct, value)))
    case 'string':
      return stringSchema(struct)
    case 'number':
      return { type: 'number' }
    case 'integer':
      return { type: 'integer' }
    case 'never':
      return false
    default:
      return {}
  }
}

function objectSchema(struct: Struct<any, any>): JsonSchema {
  const fields = objectFields(struct)
  const required = fields.filter(field => field.required).map(field => field.name)
  return {
    type: 'object',
    properties: Object.fromEntries(fields.map(field => [field.name, field.schema])),
    ...(required.length ? { required } : {}),
    ...(struct.type === 'object' ? { additionalProperties: false } : {}),
  }
}

function literalSchema(struct: Struct<any, any>): JsonSchema {
  const constant = struct.schema as string | number | boolean | null
  if (constant === null) return {}
  const spellings = typeof constant === 'boolean' ? FLAG_SPELLINGS : [constant, String(constant)]
  const accepted = spellings.filter(value => accepts(struct, value))
  const types = [...new Set(accepted.map(value => (Number.isInteger(value) ? 'integer' : typeof value)))]
  return { ...(types.length === 1 ? { type: types[0] } : {}), ...enumOf(accepted) }
}

function enumOf(values: unknown[]): Record<string, unknown> {
  const distinct = [...new Set(values)]
  return distinct.length === 1 ? { const: distinct[0] } : { enum: distinct }
}

/** A string field; when plain text is accepted, its length limits are found by probing. */
function stringSchema(struct: Struct<any, any>): JsonSchema {
  const schema: Record<string, unknown> = { type: 'string' }
  if (!accepts(struct, 'a')) return schema
  if (!accepts(struct, '') && !accepts(struct, ' ')) schema.minLength = 1
  // A blank text (spaces, tabs, newlines only) refused: what ECMAScript's \s (and String.trim) counts as blank.
  if (schema.minLength && !accepts(struct, ' \t\n\u00a0') && accepts(struct, ' a ')) schema.pattern = '\\S'
  let low = 1
  let high = 2
  while (high <= LONGEST_PROBE && accepts(struct, 'a'.repeat(high))) [low, high] = [high, high * 2]
  if (high > LONGEST_PROBE) return schema
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2)
    if (accepts(struct, 'a'.repeat(middle))) low = middle
    else high = middle
  }
  schema.maxLength = low
  return schema
}

function withNull(schema: Record<string, unknown>): JsonSchema {
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] }
  return { anyOf: [schema, { type: 'null' }] }
}

function accepts(struct: Struct<any, any>, value: unknown): boolean {
  return struct.validate(value, { coerce: true })[0] === undefined
}
