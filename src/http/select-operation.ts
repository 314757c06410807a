import type { Middleware, Next, Context } from 'koa'
import { StructError, validate, type Struct } from 'superstruct'
import { GatewayError } from '../errors.ts'
import type { Logger } from '../logger.ts'
import { distinguishingFields, operationsOf, type Operation, type PathEntry } from '../operations/operation.ts'
import { compileBodyCheck, UNSURE, type FastCheck } from '../schema/fast-check.ts'
import { isAbsent } from '../schema/fields.ts'
import { requestState, type ParsedBody } from './request-state.ts'

/** Middleware: the operation the body selects on the path, and its input validated by its schema and `accepts` (else `invalid-input`). */
export function selectOperation(entry: PathEntry, logger: Logger): Middleware {
  const fastChecks = new Map(operationsOf(entry).map(operation => [operation, compileBodyCheck(operation.schema)]))
  const select = operationSelector(entry)
  return function gatewaySelect(ctx: Context, next: Next) {
    const state = requestState(ctx)
    const operation = select(state.body!)
    if (!operation) throw new GatewayError('invalid-input')
    state.operation = operation
    const [error, input] = validateBody(state.body!.fields, operation.schema, fastChecks.get(operation))
    if (error) {
      logger.debug({ operation: operation.name, field: error instanceof StructError ? error.path.join('.') : undefined }, 'invalid request')
      throw new GatewayError('invalid-input')
    }
    if (operation.accepts && !operation.accepts(input)) throw new GatewayError('invalid-input')
    state.input = input
    return next()
  }
}

/**
 * The operation a body selects on a path (the first whose distinguishing field is present), or the
 * path's fallback. A blank distinguishing field is absent, except that a body whose `message` is the
 * text `false` is never sent as a text: a blank field of an operation that fixes `message` to false
 * (`verificarOTP: ""`, `deleteID: ""`) then selects that operation, which refuses the blank field.
 */
export function operationSelector(entry: PathEntry): (body: ParsedBody) => Operation | undefined {
  // Each distinguishing field and the place of its operation in the path's list (a field named twice: its first).
  const rankOf = new Map<string, number>()
  entry.operations.forEach((operation, rank) => distinguishingFields(operation).forEach(field => rankOf.has(field) || rankOf.set(field, rank)))
  const fixesMessageFalse = entry.operations.map(operation => {
    const message = (operation.schema.schema as Record<string, Struct<any, any> | undefined> | null)?.message
    return message?.type === 'literal' && message.schema === false
  })
  // Read off the body's own fields (a send has four or five), not every field of the path looked for in it.
  return body => {
    let [first, blank] = [Infinity, Infinity]
    for (const field in body.fields) {
      const rank = rankOf.get(field)
      if (rank === undefined || rank >= first) continue
      if (!isAbsent(body.fields[field])) first = rank
      else if (fixesMessageFalse[rank] && rank < blank) blank = rank
    }
    for (const field of body.uploads.keys()) first = Math.min(first, rankOf.get(field) ?? Infinity)
    if (first !== Infinity) return entry.operations[first]
    return blank !== Infinity && entry.fallback && isFalseText(body.fields.message) ? entry.operations[blank] : entry.fallback
  }
}

// --- Internal helpers ---

/** `message: false`, as the spec writes the fixed value (a text "0" stays a text). */
const isFalseText = (value: unknown): boolean => value === false || (typeof value === 'string' && value.trim().toLowerCase() === 'false')

/** Validate (and coerce) a body: the fast check when it is sure, else superstruct; a body superstruct cannot even print is refused, never a 500. */
function validateBody(fields: Record<string, unknown>, schema: Struct<any, any>, fastCheck: FastCheck | undefined): [Error | undefined, unknown] {
  const checked = fastCheck?.(fields) ?? UNSURE
  if (checked !== UNSURE) return [undefined, checked]
  try {
    return validate(fields, schema, { coerce: true })
  } catch (err) {
    return [err instanceof Error ? err : new Error(String(err)), undefined]
  }
}
