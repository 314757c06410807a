/**
 * Why the gateway refused or could not do something. The domain throws these codes; the HTTP edge
 * answers each with the spec's status and message (src/operations/error-answers.ts, one table).
 */
export type ErrorCode =
  // Requests
  | 'invalid-input' // a required field missing or invalid
  | 'unauthenticated' // unknown, expired or suspended authkey
  | 'rate-limited'
  | 'body-malformed' // JSON that does not parse
  | 'body-not-object' // a body that is not an object (or that could not be read)
  | 'body-too-large'
  | 'body-unsupported-type'
  | 'body-timeout' // the body was not received whole in time
  // Accounts and devices
  | 'email-taken'
  | 'account-not-found'
  | 'device-not-found'
  | 'link-failed' // no QR or pairing code could be made for the device
  | 'already-connected'
  | 'not-connected'
  | 'delete-failed'
  // Messages, groups, OTP
  | 'message-not-found'
  | 'group-not-found'
  | 'invite-invalid'
  | 'otp-invalid'
  // The device's send queue
  | 'send-queue-full'
  | 'send-queue-timeout' // dropped unsent: it waited past the send time-out
  | 'send-stalled' // started, but the network did not answer in time
  | 'shutting-down'
  // Several instances (cluster mode)
  | 'holder-unavailable' // the instance holding the device's session could not be reached, broke off, or is changing
  | 'forward-refused' // a request claiming to be forwarded by another instance, with a wrong or stale signature
  | 'instance-full' // this instance holds as many devices as it may
  // Quotas of an account
  | 'quota-exceeded'
  // Media given by URL or upload
  | 'media-refused'
  | 'media-bad-status'
  | 'media-timeout'
  | 'media-unreachable'
  | 'media-too-large'
  | 'media-budget-exceeded' // the process has as many media bytes in flight as it may
  | 'card-image-invalid'

/** The one error type of the gateway's domain: a code, what caused it, and what a client may be told. */
export class GatewayError extends Error {
  /** A detail the answer adds to the code's message, in parentheses (a size limit, an upstream status). */
  readonly detail?: string
  /** Seconds after which a retry may succeed (answered as `Retry-After`). */
  readonly retryAfterSeconds?: number

  constructor(
    readonly code: ErrorCode,
    options: { cause?: unknown; detail?: string; retryAfterSeconds?: number } = {},
  ) {
    super(options.detail ? `${code} (${options.detail})` : code, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'GatewayError'
    this.detail = options.detail
    this.retryAfterSeconds = options.retryAfterSeconds
  }
}

/** Whether `err` is a GatewayError with `code`. */
export function isGatewayError(err: unknown, code?: ErrorCode): err is GatewayError {
  return err instanceof GatewayError && (code === undefined || err.code === code)
}
