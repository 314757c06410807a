import type { Infer, Struct } from 'superstruct'
import type { Services } from '../services.ts'
import type { UploadedFile } from './body.ts'

/** What a handler gets besides its validated input. */
export interface OperationContext {
  services: Services
  /** Files of a multipart body, by field name. */
  uploads: Map<string, UploadedFile>
  /** Absolute URL of the gateway's mount point (for links), without a trailing slash. */
  baseUrl: string
  /** The client's IP address (from X-Forwarded-For only when the Koa app trusts its proxy). */
  clientIp: string
}

/** A handler's answer: the response body without `status` (always 200 on success). */
export type Reply = { message: string } & Record<string, unknown>

/** How to answer when the schema rejects the body. */
export interface InvalidAnswer {
  status: number
  message: string
  extra?: Record<string, unknown>
}

/**
 * One operation of the API: `field` is the distinguishing wire field (or several that select it
 * together), `name` the English operation name, `schema` a superstruct struct of the wire body and
 * `handle` the function that renames wire fields to English and calls the domain.
 */
export interface Operation<S extends Struct<any, any> = Struct<any, any>> {
  field?: string | string[]
  name: string
  /** Short human summary (used by docs). */
  summary: string
  schema: S
  /** Answer for a body the schema rejects; default 401 `validation.required`. */
  invalid?: InvalidAnswer
  handle(input: Infer<S>, context: OperationContext): Promise<Reply>
}

/** Define an operation with its handler's input typed by its schema. */
export function defineOperation<S extends Struct<any, any>>(operation: Operation<S>): Operation<S> {
  return operation
}

/**
 * One path of the API and its operations in precedence order: the first whose distinguishing field
 * is present (not empty) wins; `fallback` applies when none is (absent: 401 `validation.required`).
 */
export interface PathEntry {
  path: string
  operations: Operation[]
  fallback?: Operation
}
