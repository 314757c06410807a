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
