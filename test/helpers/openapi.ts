import { Ajv2020 } from 'ajv/dist/2020.js'
import { dereference } from '@readme/openapi-parser'

/** The operations (by name) of a path's request `oneOf` that a body matches, per the OpenAPI document. */
export type Matcher = (path: string, body: Record<string, unknown>) => string[]

/**
 * Dereference an OpenAPI document and build a matcher over its request schemas, with an independent
 * JSON Schema validator (Ajv, draft 2020-12 as OpenAPI 3.1 uses it).
 */
export async function requestMatcher(document: Record<string, unknown>): Promise<Matcher> {
  const resolved = (await dereference(structuredClone(document) as never)) as unknown as {
    paths: Record<string, { post?: { requestBody: { content: { 'application/json': { schema: { oneOf: Record<string, unknown>[] } } } } } }>
  }
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false })
  const branches = new Map<string, { name: string; check: (body: unknown) => boolean }[]>()
  for (const [path, item] of Object.entries(resolved.paths)) {
    if (!item.post) continue
    const schemas = item.post.requestBody.content['application/json'].schema.oneOf
    branches.set(
      path,
      schemas.map(schema => {
        const check = ajv.compile(schema)
        return { name: String(schema['x-operation']), check: (body: unknown) => check(body) }
      }),
    )
  }
  return (path, body) => (branches.get(path) ?? []).filter(branch => branch.check(body)).map(branch => branch.name)
}

/** Where an answer breaks the OpenAPI document (empty: it fits): its status has no response on that path and method, or its body does not fit that response's schema (or it has a body where none is documented), or (given its `headers`) it carries a `Retry-After` the response does not list. */
export type AnswerCheck = (path: string, status: number, body: unknown, method?: 'post' | 'get', headers?: Headers) => string[]

/** Build an AnswerCheck over a document's responses (`POST` unless told), with Ajv (draft 2020-12) as requestMatcher does. */
export async function answerChecker(document: Record<string, unknown>): Promise<AnswerCheck> {
  const resolved = (await dereference(structuredClone(document) as never)) as unknown as {
    paths: Record<
      string,
      Record<
        string,
        { responses: Record<string, { headers?: Record<string, unknown>; content?: { 'application/json'?: { schema: Record<string, unknown> } } }> }
      >
    >
  }
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false })
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>()
  return (path, status, body, method = 'post', headers) => {
    const response = resolved.paths[path]?.[method]?.responses[String(status)]
    if (!response) return [`${method} ${path}: no ${status} response documented`]
    if (headers?.has('retry-after') && !response.headers?.['Retry-After']) return [`${method} ${path} ${status}: Retry-After not documented`]
    const schema = response.content?.['application/json']?.schema
    if (!schema) return body === undefined ? [] : [`${method} ${path} ${status}: ${JSON.stringify(body)} where no JSON body is documented`]
    const key = `${method} ${path} ${status}`
    if (!compiled.has(key)) compiled.set(key, ajv.compile(schema))
    const check = compiled.get(key)!
    return check(body) ? [] : [`${key}: ${JSON.stringify(body)} does not fit: ${ajv.errorsText(check.errors)}`]
  }
}

/** Where an answer is not declared by the operation that gave it (empty: it is); see declarationChecker. */
export type DeclarationCheck = (path: string, operation: string, status: number, body: { status: number; message: string }) => string[]

/**
 * Build a DeclarationCheck over a document's `POST` responses: an answer is declared when an example of
 * its path and status has its exact body (a message with a detail, `… (16 MB)`, matching the example's
 * message before it) and names the operation among those giving it. An AnswerCheck passes any
 * `{status, message}` under a status the path lists; this one fails an answer its operation's error list leaves out.
 */
export function declarationChecker(document: any): DeclarationCheck {
  return (path, operation, status, body) => {
    const examples = Object.values(document.paths[path]?.post?.responses[String(status)]?.content?.['application/json']?.examples ?? {}) as {
      summary: string
      value: { message: string }
    }[]
    const declared = examples.some(({ summary, value }) => {
      const operations = /\(([^()]*)\)$/.exec(summary)?.[1].split(', ') ?? []
      const same =
        JSON.stringify(value) === JSON.stringify(body) ||
        (JSON.stringify({ ...value, message: body.message }) === JSON.stringify(body) && body.message.startsWith(`${value.message} (`))
      return same && operations.includes(operation)
    })
    return declared ? [] : [`${path} ${operation}: ${status} ${JSON.stringify(body)} not declared`]
  }
}

/** One request of each operation that makes a network call through the device's send queue (a send, a read receipt, the OTP send, the three group calls), for `keys`' device: [path, body, operation]. */
export function networkCallRequests(keys: { authkey: string; appkey: string }) {
  return [
    ['/api/create-message', { ...keys, to: '5511988880002', message: 'oi' }, 'sendText'],
    ['/api/create-message', { ...keys, to: '5511988880002', markRead: '3EB0AAAA' }, 'markMessageRead'],
    ['/api/create-message', { ...keys, to: '5511988880002', enviarOTP: 'true' }, 'sendOtp'],
    ['/api/groups', { ...keys, message: 'false', infoConvite: '120363000000000001@g.us' }, 'groupInfo'],
    ['/api/groups', { ...keys, message: 'Equipe', usuarios: '5511988880002', criarGrupo: 'true' }, 'createGroup'],
    ['/api/groups', { ...keys, message: 'false', entrarConvite: 'https://chat.whatsapp.com/GPiWoLO26dKzFBO2wMKjZD' }, 'joinGroup'],
  ] as const
}
