import type { Infer, Struct } from 'superstruct'
import type { Services } from '../services.ts'
import type { UploadedFile } from './body.ts'

/** What a handler gets besides its validated input. */
export interface OperationContext {
  services: Services
  /** Files of a multipart body, by field name. */
  uploads: ReadonlyMap<string, UploadedFile>
  /** Absolute URL of the gateway's mount point (for links), without a trailing slash. */
  baseUrl: string
  /** The client's IP address (from X-Forwarded-For only when the Koa app trusts its proxy). */
  clientIp: string
}

/** A handler's answer: the response body without `status` (always 200 on success). */
export type Reply = { message: string } & Record<string, unknown>

/** The answer body a handler returns for an answer struct: everything but `status` (the router adds 200). */
export type ReplyOf<A extends Struct<any, any>> = 0 extends 1 & Infer<A> ? Reply : Omit<Infer<A>, 'status'>

/** How to answer when the schema rejects the body. */
export interface InvalidAnswer {
  status: number
  message: string
  extra?: Record<string, unknown>
}

/** An error answer an operation may give (for its documentation). */
export interface ErrorAnswer {
  status: number
  message: string
  /** Extra fields of the error body (`valid: false` for OTP verification). */
  extra?: Record<string, unknown>
}

/**
 * One operation of the API: `field` is the distinguishing wire field (or several that select it
 * together), `name` the English operation name, `schema` a superstruct struct of the wire body,
 * `answer` one of the success body, and `handle` the function that renames wire fields to English
 * and calls the domain (the compiler holds its result to `answer`).
 */
export interface Operation<S extends Struct<any, any> = Struct<any, any>, A extends Struct<any, any> = Struct<any, any>> {
  field?: string | string[]
  name: string
  /** Short human summary (used by docs). */
  summary: string
  schema: S
  /** The success body (`{status: 200, message, ...}`): documentation, client types and tests read it. */
  answer: A
  /** Answer for a body the schema rejects; default 401 `validation.required`. */
  invalid?: InvalidAnswer
  /** The error answers the operation itself may give, beyond `invalid` and the body errors of every path (docs). */
  errors?: ErrorAnswer[]
  handle(input: Infer<S>, context: OperationContext): Promise<ReplyOf<A>>
}

/** Define an operation with its handler's input typed by its schema and its result by its answer. */
export function defineOperation<S extends Struct<any, any>, A extends Struct<any, any>>(operation: Operation<S, A>): Operation<S, A> {
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
