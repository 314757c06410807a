import { literal, object, string, type Infer, type Struct } from '../schema/structs.ts'
import type { Account, Accounts } from '../domain/accounts.ts'
import type { Agents } from '../domain/agents.ts'
import type { Device, DeviceMatch, Devices } from '../domain/devices.ts'
import type { FlowConversations } from '../domain/flows.ts'
import type { Messaging } from '../domain/messaging/index.ts'
import type { MediaBudget, MediaHold } from '../domain/messaging/media-budget.ts'
import type { UploadedFile } from '../domain/messaging/media-loader.ts'
import type { ShareLinks } from '../domain/share-links.ts'
import type { RateLimits } from '../security/rate-limits.ts'
import type { SessionStatus } from '../ports/transport.ts'
import type { AnswerCode, ErrorAnswer } from './error-answers.ts'

/** A file of a multipart body (declared beside the media loader, which reads it). */
export type { UploadedFile }

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
    allowPrivateUrls: boolean
    /** The webhook sender's own URL policy (WebhookSender.accepts), when it has one: operations 3 and 4 take a webhook URL by it. */
    acceptsWebhookUrl?: (url: string) => boolean
    /** IANA zone of `agendamento`. */
    timeZone: string
    otpTtlMs: number
  }
}

/** What a handler gets besides its validated input. */
export interface OperationContext {
  services: OperationServices
  uploads: ReadonlyMap<string, UploadedFile>
  /** Absolute URL of the gateway's mount point, without a trailing slash. */
  baseUrl: string
  clientIp: string
  /** This request's share of the process's media budget (given back once it is answered). */
  mediaHold: MediaHold
  /** The caller's account and the declared device in it (an operation that declares `device` only; a link's found or made). */
  account: Account
  device: Device
  /** The device's open session (a `connected` need). */
  status?: SessionStatus
  /** A link: whether this request made the device (a failed link deletes it again), and the appkey to answer. */
  ensured?: { created: boolean; appkey?: string }
}

/** An operation's need: `device` (on its holder), `connected` (also its session open, else 409), `link` (found or made, linked by its future holder). */
export type SessionNeed = 'device' | 'connected' | 'link'

/** The device an operation works on, found in the caller's account before the handler runs and, with `session`, worked on its holder. */
export interface DeviceNeed<I> {
  /** The input field naming the device (a link without it makes a new device). */
  ref: keyof I & string
  match?: DeviceMatch[]
  session?: SessionNeed | ((input: I) => SessionNeed | undefined)
  /** A link: the settings of the device to make when none of that name exists (may refuse the input). */
  create?(input: I, services: OperationServices): { appkey?: string; webhookUrl?: string }
  /** The operation deletes the device: it also finds one whose deletion was cut short (to every other a device being deleted is not found). */
  deletes?: true
}

/** The device of a request on the send, group, OTP and settings paths: its `appkey` (the device's appkey or name), in the caller's account. */
export function deviceByAppkey<I extends { appkey: string }>(session?: SessionNeed | ((input: I) => SessionNeed | undefined)): DeviceNeed<I> {
  return { ref: 'appkey', match: ['appkey', 'name'], ...(session ? { session } : {}) }
}

/** The fields of a success answer: `status` 200 and `message`, then the operation's own. */
type AnswerFields<S> = { status: Struct<200, 200>; message: Struct<string, null> } & S

/**
 * A success answer: `{status: 200, message}` plus exactly `fields` (an unexpected field fails it).
 * Its type is spelled through superstruct's public `object`, so the declaration files name no
 * module of superstruct's own dist/ (which a host's compiler cannot resolve).
 */
export function answer<S extends Record<string, Struct<any, any>>>(fields: S): ReturnType<typeof object<AnswerFields<S>>> {
  return object({ status: literal(200), message: string(), ...fields })
}

/** The answer body a handler returns for an answer struct: everything but `status` (the router adds 200). */
export type ReplyOf<A extends Struct<any, any>> = 0 extends 1 & Infer<A> ? { message: string } & Record<string, unknown> : Omit<Infer<A>, 'status'>

/** One operation of the API: its distinguishing wire field(s), wire body, success body, and the handler that renames wire fields to English and calls the domain. */
export interface Operation<S extends Struct<any, any> = Struct<any, any>, A extends Struct<any, any> = Struct<any, any>> {
  field?: string | string[]
  name: string
  summary: string
  schema: S
  answer: A
  /** What the operation may be refused for, beyond the body errors of every path (its documentation). */
  errors: AnswerCode[]
  /** Its own answers to some codes, and fields every error answer of it carries (`valid: false`). */
  answers?: Partial<Record<AnswerCode, ErrorAnswer>>
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
