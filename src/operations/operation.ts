import { literal, object, string, type Infer, type Struct } from 'superstruct'
import type { Account, Accounts } from '../domain/accounts.ts'
import type { Agents } from '../domain/agents.ts'
import type { Device, DeviceMatch, Devices } from '../domain/devices.ts'
import type { FlowConversations } from '../domain/flows.ts'
import type { Messaging } from '../domain/messaging/index.ts'
import type { MediaBudget, MediaHold } from '../domain/messaging/media-budget.ts'
import type { ShareLinks } from '../domain/share-links.ts'
import type { RateLimits } from '../security/rate-limits.ts'
import type { SessionStatus } from '../ports/transport.ts'
import type { AnswerCode, ErrorAnswer } from './error-answers.ts'

/** A file of a multipart body. */
export interface UploadedFile {
  data: Buffer
  fileName?: string
  mimetype?: string
}

/** The domain services the operations call: the HTTP edge's view of the gateway. */
export interface OperationServices {
  accounts: Accounts
  devices: Devices
  agents: Agents
  links: ShareLinks
  flows: FlowConversations
  messaging: Messaging
  mediaBudget: MediaBudget
  rateLimits: RateLimits
  settings: {
    /** Webhook URLs may name loopback and private addresses. */
    allowPrivateUrls: boolean
    /** IANA zone of `agendamento`. */
    timeZone: string
    otpTtlMs: number
  }
}

/** What a handler gets besides its validated input. */
export interface OperationContext {
  services: OperationServices
  /** Files of a multipart body, by field name. */
  uploads: ReadonlyMap<string, UploadedFile>
  /** Absolute URL of the gateway's mount point, without a trailing slash. */
  baseUrl: string
  /** The client's IP address (from X-Forwarded-For only when the Koa app trusts its proxy). */
  clientIp: string
  /** This request's share of the process's media budget (given back once it is answered). */
  mediaHold: MediaHold
  /** The caller's account (an operation that declares `device` only). */
  account: Account
  /** The declared device, found in the caller's account (for a link: found or made). */
  device: Device
  /** The device's open session (a `connected` need). */
  status?: SessionStatus
  /** A link: whether this request made the device (a failed link deletes it again), and the appkey to answer. */
  ensured?: { created: boolean; appkey?: string }
}

/**
 * What an operation needs of the device's session: `device`, worked by the instance holding it;
 * `connected`, the same with the session open (409 `not-connected`); `link`, the device (made when
 * none of that name exists) linked by the instance that will hold it.
 */
export type SessionNeed = 'device' | 'connected' | 'link'

/**
 * The device an operation works on, found in the caller's account (by `authkey`) before the handler
 * runs and, with `session`, worked on the instance holding it: handlers never see the cluster.
 */
export interface DeviceNeed<I> {
  /** The input field naming the device (a link without it makes a new device). */
  ref: keyof I & string
  /** How `ref` may match a device (default: its id, name or appkey). */
  match?: DeviceMatch[]
  session?: SessionNeed | ((input: I) => SessionNeed | undefined)
  /** A link: the settings of the device to make when none of that name exists (may refuse the input). */
  create?(input: I, services: OperationServices): { appkey?: string; webhookUrl?: string }
}

/** The device of a request on the send, group, OTP and settings paths: its `appkey` (the device's appkey or name), in the caller's account. */
export function deviceByAppkey<I extends { appkey: string }>(session?: SessionNeed | ((input: I) => SessionNeed | undefined)): DeviceNeed<I> {
  return { ref: 'appkey', match: ['appkey', 'name'], ...(session ? { session } : {}) }
}

/** A success answer: `{status: 200, message}` plus exactly `fields` (an unexpected field fails it). */
export function answer<S extends Record<string, Struct<any, any>>>(fields: S) {
  return object({ status: literal(200), message: string(), ...fields })
}

/** The answer body a handler returns for an answer struct: everything but `status` (the router adds 200). */
export type ReplyOf<A extends Struct<any, any>> = 0 extends 1 & Infer<A> ? { message: string } & Record<string, unknown> : Omit<Infer<A>, 'status'>

/**
 * One operation of the API: `field` the distinguishing wire field (or several that select it
 * together), `schema` the wire body, `answer` the success body, and `handle` the function that
 * renames wire fields to English and calls the domain.
 */
export interface Operation<S extends Struct<any, any> = Struct<any, any>, A extends Struct<any, any> = Struct<any, any>> {
  field?: string | string[]
  name: string
  summary: string
  schema: S
  answer: A
  /** What the operation may be refused for, beyond the body errors of every path (its documentation). */
  errors: AnswerCode[]
  /** The operation's own answer to a code, where the spec words it per operation (else the table's). */
  answers?: Partial<Record<AnswerCode, ErrorAnswer>>
  /** Fields every error answer of the operation carries (`valid: false` for OTP verification). */
  errorExtra?: Record<string, unknown>
  /** Checks of the input beyond its schema, before any lookup: false is `invalid-input`. */
  accepts?(input: Infer<S>): boolean
  device?: DeviceNeed<Infer<S>>
  handle(input: Infer<S>, context: OperationContext): Promise<ReplyOf<A>>
}

/** Define an operation with its handler's input typed by its schema and its result by its answer. */
export function defineOperation<N extends string, S extends Struct<any, any>, A extends Struct<any, any>>(
  operation: Operation<S, A> & { name: N },
): Operation<S, A> & { name: N } {
  return operation
}

/** One path of the API and its operations in precedence order; `fallback` applies when no distinguishing field is present. */
export interface PathEntry {
  path: string
  operations: readonly Operation[]
  fallback?: Operation
}

/** The operations of a path in precedence order, the fallback last. */
export function operationsOf(entry: PathEntry): Operation[] {
  return [...entry.operations, ...(entry.fallback ? [entry.fallback] : [])]
}

/** The distinguishing fields of an operation (none for a fallback). */
export function distinguishingFields(operation: Operation): string[] {
  return operation.field === undefined ? [] : Array.isArray(operation.field) ? operation.field : [operation.field]
}
