import { errorAnswers, type AnswerCode, type ErrorAnswer } from '../operations/error-answers.ts'
import { distinguishingFields, operationsOf, type Operation, type PathEntry } from '../operations/operation.ts'
import { structSchema, type JsonSchema } from '../schema/struct-schema.ts'
import type { HttpStatusMode } from './render.ts'

/**
 * The refusals every operation may answer: before the body chooses it (in the table's words) the body's (unreadable, too slow, or a large one while the media budget is busy: request-body.ts),
 * a forward's whose signature does not verify (cluster mode only: any request carrying the forwarding headers, docs/api.md) and the shutdown drain's; then the request rate limits, the store, the unexpected.
 */
const beforeChoice: AnswerCode[] = [
  'forward-refused',
  'body-malformed',
  'body-not-object',
  'body-too-large',
  'body-unsupported-type',
  'body-timeout',
  'media-budget-exceeded',
  'shutting-down',
]
const anyErrors: AnswerCode[] = [...beforeChoice, 'rate-limited', 'storage-unavailable', 'internal']
/** The refusals of an operation worked on its device's holder (a `session` need): the holder away or changing, this instance full. */
const heldErrors: AnswerCode[] = ['holder-unavailable', 'instance-full']

/** The headers of a response whose answers carry `Retry-After` (the 429 and 503 that say to try again). */
export const RETRY_AFTER = { 'Retry-After': { description: 'Seconds after which a retry may succeed.', schema: { type: 'integer', minimum: 1 } } }

/** How `operation` answers `code`: its own wording where it has one, else the table's, with its extra fields (none on a refusal given before the body chose it) and Retry-After. */
export function operationAnswer(operation: Operation, code: AnswerCode): ErrorAnswer {
  const answer = operation.answers?.[code] ?? errorAnswers[code]
  return operation.errorExtra && !beforeChoice.includes(code) ? { ...answer, extra: { ...answer.extra, ...operation.errorExtra } } : answer
}

/**
 * The OpenAPI 3.1 document of the table: each path a `oneOf` of its operations, each excluding the
 * fields that take precedence, so exactly one matches. Its responses are the HTTP codes `mode`
 * answers with: under `always200` every answer of an operation path is a 200, errors included.
 */
export function openApiDocument(
  table: readonly PathEntry[],
  version: string,
  servicePaths: Record<string, unknown>,
  mode: HttpStatusMode,
): Record<string, unknown> {
  const schemas: Record<string, JsonSchema> = { ErrorAnswer: errorAnswerSchema }
  const paths: Record<string, unknown> = {}
  for (const entry of table) {
    const ordered = operationsOf(entry)
    ordered.forEach((operation, index) => {
      schemas[componentName(operation, 'Request')] = requestSchema(entry, operation, index)
      schemas[componentName(operation, 'Answer')] = { title: operation.name, ...(structSchema(operation.answer) as object) }
    })
    paths[entry.path] = { post: postOperation(entry, ordered, mode) }
  }
  Object.assign(paths, servicePaths)
  return {
    openapi: '3.1.0',
    info: { title: 'zapgate', version, description: INFO },
    tags: [...table.map(entry => ({ name: tagOf(entry.path) })), { name: 'service', description: 'Health, metrics, documentation and the QR share page.' }],
    paths,
    components: { schemas },
  }
}

// --- Internal helpers ---

/** The component name of an operation's request or answer schema (`SendTextRequest`): the names of the exported types. */
function componentName(operation: Operation, kind: 'Request' | 'Answer'): string {
  return operation.name[0].toUpperCase() + operation.name.slice(1) + kind
}

const INFO = `The gateway API: every operation is a \`POST\` with a JSON, \`application/x-www-form-urlencoded\` or \`multipart/form-data\` body (all three mean the same; in form bodies lists come as JSON text or qs-nested fields, and a multipart file part counts as its field). Every answer is JSON with \`status\` and \`message\`.

**Operation choice** on a shared path: the first distinguishing field present (not empty) in the path's precedence order wins (each request schema says its field and rank); with none, the path's default operation applies, or 401 \`validation.required\` when it has none.

**Fields**: every field is a string on the wire (numbers are accepted as their text); flags accept \`"true"\`, \`true\`, \`"1"\` and \`"false"\`, \`false\`, \`"0"\`.

**HTTP status** equals the body's \`status\`, unless the gateway runs with \`httpStatus: 'always200'\` (then HTTP 200 with the real status in the body).`

const errorAnswerSchema: JsonSchema = {
  type: 'object',
  required: ['status', 'message'],
  properties: {
    status: { type: 'integer' },
    message: { type: 'string' },
    valid: { type: 'boolean', description: 'OTP verification only: always false on an error.' },
  },
}

function requestSchema(entry: PathEntry, operation: Operation, index: number): JsonSchema {
  const fields = distinguishingFields(operation)
  const before = entry.operations.slice(0, index).flatMap(distinguishingFields)
  const total = operationsOf(entry).length
  const choice =
    fields.length === 0
      ? before.length
        ? `The default of \`${entry.path}\`: applies when none of ${list(before)} is present.`
        : `The only operation of \`${entry.path}\`.`
      : `Chosen by ${list(fields, ' or ')} (precedence ${index + 1} of ${total} on \`${entry.path}\`)` +
        (before.length ? `, when none of ${list(before)} (which take precedence) is present.` : '.')
  return {
    title: operation.name,
    description: `${operation.summary}. ${choice}`,
    ...(structSchema(operation.schema) as object),
    'x-operation': operation.name,
    'x-distinguishing-field': fields.length === 0 ? null : fields.length === 1 ? fields[0] : fields,
    'x-precedence': index + 1,
    ...(before.length ? { not: { anyOf: before.map(present) } } : {}),
  }
}

/** A body where `field` is present and not blank. */
function present(field: string): JsonSchema {
  return { required: [field], properties: { [field]: { not: { anyOf: [{ type: 'null' }, { type: 'string', pattern: '^\\s*$' }] } } } }
}

function postOperation(entry: PathEntry, ordered: Operation[], mode: HttpStatusMode): Record<string, unknown> {
  const requests = { oneOf: ordered.map(operation => ({ $ref: `#/components/schemas/${componentName(operation, 'Request')}` })) }
  const hasFile = ordered.some(operation => (operation.schema.schema as Record<string, unknown> | null)?.file !== undefined)
  return {
    operationId: `post${entry.path.replace(/(?:^|[^a-zA-Z0-9]+)([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase())}`,
    tags: [tagOf(entry.path)],
    summary: ordered.map(operation => operation.name).join(', '),
    description: ordered.map((op, i) => `${i + 1}. **${op.name}** (${list(distinguishingFields(op), ' or ') || 'default'}): ${op.summary}.`).join('\n'),
    'x-operations': ordered.map((op, index) => ({ name: op.name, field: distinguishingFields(op), precedence: index + 1, summary: op.summary })),
    requestBody: {
      required: true,
      content: {
        'application/json': { schema: requests },
        'application/x-www-form-urlencoded': { schema: requests },
        'multipart/form-data': { schema: requests, ...(hasFile ? { encoding: { file: { contentType: '*/*' } } } : {}) },
      },
    },
    responses: (mode === 'always200' ? allAs200 : byStatus)(
      ordered.map(operation => ({ $ref: `#/components/schemas/${componentName(operation, 'Answer')}` })),
      errorResponses(entry, ordered),
    ),
  }
}

/** An error answer's response in the document: its schema, an example per distinct answer, and `Retry-After` when it carries one. */
type ErrorResponse = { description: string; headers?: unknown; content: { 'application/json': { schema: unknown; examples: Record<string, unknown> } } }

/** The responses of an operation path when the HTTP code is the body's `status`: the success answers under 200, each error under its own code. */
function byStatus(answers: JsonSchema[], errors: Record<string, ErrorResponse>): Record<string, unknown> {
  const success = {
    description: 'The answer of the operation the body chose (anyOf: operations of a path may answer alike).',
    content: { 'application/json': { schema: { anyOf: answers } } },
  }
  return { '200': success, ...errors }
}

/** The responses of an operation path under `httpStatus: 'always200'`: one 200 whose body is the success answer or an error answer (its real status in `status`), with every error's example and `Retry-After`. */
function allAs200(answers: JsonSchema[], errors: Record<string, ErrorResponse>): Record<string, unknown> {
  const examples = Object.fromEntries(
    Object.entries(errors).flatMap(([status, response]) =>
      Object.entries(response.content['application/json'].examples).map(([name, example]) => [`${status}-${name}`, example]),
    ),
  )
  return {
    '200': {
      description:
        "Every answer is HTTP 200 (`httpStatus: 'always200'`), its real status in the body's `status`: the answer of the operation the body chose, or an error answer.",
      ...(Object.values(errors).some(response => response.headers) ? { headers: RETRY_AFTER } : {}),
      content: { 'application/json': { schema: { anyOf: [...answers, { $ref: '#/components/schemas/ErrorAnswer' }] }, examples } },
    },
  }
}

/** One response per error status, with an example per distinct answer and the operations giving it. */
function errorResponses(entry: PathEntry, ordered: Operation[]): Record<string, ErrorResponse> {
  const byAnswer = new Map<string, { answer: ErrorAnswer; operations: Set<string> }>()
  const add = (answer: ErrorAnswer, operation: string) => {
    const key = JSON.stringify([answer.status, answer.message, answer.extra ?? {}])
    const found = byAnswer.get(key) ?? { answer, operations: new Set<string>() }
    found.operations.add(operation)
    byAnswer.set(key, found)
  }
  for (const operation of ordered)
    for (const code of ['invalid-input' as const, ...operation.errors, ...anyErrors, ...(operation.device?.session ? heldErrors : [])])
      add(operationAnswer(operation, code), operation.name)
  if (!entry.fallback) add(errorAnswers['invalid-input'], 'no operation chosen')
  const responses: Record<string, ErrorResponse> = {}
  for (const { answer, operations } of [...byAnswer.values()].sort((a, b) => a.answer.status - b.answer.status)) {
    const response = (responses[answer.status] ??= {
      description: '',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorAnswer' }, examples: {} } },
    })
    if (answer.retryAfterSeconds !== undefined) Object.assign(response, { headers: RETRY_AFTER }) // render.ts sets it
    const examples = response.content['application/json'].examples
    examples[exampleName(answer, examples)] = {
      summary: `${answer.message} (${[...operations].join(', ')})`,
      value: { status: answer.status, message: answer.message, ...answer.extra },
    }
    if (!response.description.split(' | ').includes(answer.message)) response.description += (response.description && ' | ') + answer.message
  }
  return responses
}

function exampleName(answer: ErrorAnswer, taken: Record<string, unknown>): string {
  const known = Object.entries(errorAnswers).find(([, known]) => known.message === answer.message)?.[0]
  const slug = answer.message.normalize('NFD').replace(/[^A-Za-z0-9]+/g, '-')
  const base = known ?? slug.replace(/^-|-$/g, '').toLowerCase()
  let name = answer.extra ? `${base}-${Object.keys(answer.extra).join('-')}` : base
  for (let n = 2; name in taken; n++) name = `${base}-${n}`
  return name
}

function tagOf(path: string): string {
  return path.split('/').filter(Boolean).pop() ?? path
}

function list(fields: string[], joiner = ', '): string {
  return fields.map(field => `\`${field}\``).join(joiner)
}
