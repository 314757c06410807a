import type { Context, Middleware, Next } from 'koa'
import { GatewayError } from '../../errors.ts'
import { isPlainObject } from '../json-body.ts'
import { requestState } from '../request-state.ts'
import type { UploadedFile } from '../../operations/operation.ts'
import { errorAnswer } from '../../operations/error-answers.ts'
import type { BatchAnswerLine } from './coalesce.ts'
import { httpStatusOf, type HttpStatusMode } from '../render.ts'

/** At most this many forwards are taken in one batch (the forwarder sends at most 32). */
const MAX_ITEMS = 64

/** How long an answer line waits at most for the lines done after it, to go out in one write. */
const LINE_WAIT_MS = 2

const NO_UPLOADS: ReadonlyMap<string, UploadedFile> = new Map()

/**
 * Middleware of the batch path (coalesce.ts's BATCH_PATH), after the body is read: a verified batch
 * of forwards (a request not signed by an instance of the cluster is 403 `forward-refused`), each run
 * through `chains` (its path's operation middleware) as the forwarded request it stands for, in a
 * context of its own; the answer is NDJSON, a line per forward as soon as it is done, ended once all are.
 * A forward that reaches no operation is answered as the gateway's `mode` words answers (always200: HTTP 200, the status in the body).
 */
export function forwardedBatch(chains: ReadonlyMap<string, Middleware>, mode: HttpStatusMode): Middleware {
  return async function gatewayForwardBatch(ctx: Context) {
    const state = requestState(ctx)
    const from = state.forwardedFrom?.instanceId
    if (from === undefined) throw new GatewayError('forward-refused')
    const items = state.body!.fields.items
    if (!Array.isArray(items) || items.length === 0 || items.length > MAX_ITEMS) throw new GatewayError('body-not-object')
    // Written here as each forward is done, not by Koa (a stream body that its forwarder cut off is an error Koa logs); awaited, so the shutdown drain counts the batch until its last forward.
    ctx.respond = false
    const res = ctx.res
    res.writeHead(200, { 'content-type': 'application/x-ndjson' })
    let waiting = ''
    let left = items.length
    let timer: NodeJS.Timeout | undefined
    // The lines done within LINE_WAIT_MS of the first go out in one write (a write per line cost a socket write per forward), with the end once all are done.
    const flush = () => {
      clearTimeout(timer)
      timer = undefined
      if (!res.destroyed) res.write(waiting)
      waiting = ''
    }
    await Promise.all(
      items.map((item: unknown, i) =>
        runForwarded(ctx, chains, from, item, mode).then(answer => {
          waiting += `${line(i, answer, mode)}\n`
          if (--left > 0) timer ??= setTimeout(flush, LINE_WAIT_MS)
          else (clearTimeout(timer), res.end(waiting)) // the last lines and the answer's end in one write
        }),
      ),
    )
  }
}

/** Middleware first of a batched forward's chain: its body must be a JSON object, as a request's. */
export function forwardedBody(ctx: Context, next: Next) {
  if (!isPlainObject(requestState(ctx).body!.fields)) throw new GatewayError('body-not-object')
  return next()
}

// --- Internal helpers ---

/** Run one forward of a batch on its path's chain (which answers every error), and what the client would have been answered. */
async function runForwarded(
  batch: Context,
  chains: ReadonlyMap<string, Middleware>,
  from: string,
  item: unknown,
  mode: HttpStatusMode,
): Promise<Omit<BatchAnswerLine, 'i'>> {
  const { path, clientIp, baseUrl, body } = (isPlainObject(item) ? item : {}) as Record<string, unknown>
  const chain = typeof path === 'string' ? chains.get(path) : undefined
  if (!chain) return failed(new GatewayError('forward-refused'), mode) // no operation path: not a forward an instance makes
  const ctx = new ForwardedOperationContext(batch, path as string)
  const state = requestState(ctx as unknown as Context)
  state.forwardedFrom = { instanceId: from, ...(typeof clientIp === 'string' ? { clientIp } : {}), ...(typeof baseUrl === 'string' ? { baseUrl } : {}) }
  state.body = { fields: body as Record<string, unknown>, uploads: NO_UPLOADS }
  try {
    await chain(ctx as unknown as Context, async () => {})
  } catch (err) {
    return failed(err, mode) // answerErrors answers every error: not reached
  }
  return ctx.body ? { status: ctx.status, headers: ctx.headers, body: ctx.body as Record<string, unknown> } : failed(new Error('no answer'), mode)
}

/** A forward's answer line; an answer JSON cannot hold (a handler's BigInt, a cycle) answered as an internal error, so the batch still ends. */
function line(i: number, answer: Omit<BatchAnswerLine, 'i'>, mode: HttpStatusMode): string {
  try {
    return JSON.stringify({ i, ...answer } satisfies BatchAnswerLine)
  } catch (err) {
    return JSON.stringify({ i, ...failed(err, mode) })
  }
}

/** The answer line of a forward that could not run, its HTTP status as `mode` words it (the body always says the real one). */
function failed(err: unknown, mode: HttpStatusMode): Omit<BatchAnswerLine, 'i'> {
  const { status, message } = errorAnswer(err)
  return { status: httpStatusOf(mode, status), headers: {}, body: { status, message } }
}

/**
 * What a forward of a batch runs in: the part of a Koa context the operation middleware read and
 * write (status, body, headers, state; the client's address and URL come from the forward), with no
 * HTTP request of its own (its batch's stands for it where one is asked).
 */
class ForwardedOperationContext {
  readonly state: Record<string, unknown> = {}
  readonly method = 'POST'
  status = 404
  body: unknown = undefined
  readonly headers: Record<string, string> = {}

  constructor(
    private readonly batch: Context,
    readonly path: string,
  ) {}

  get originalUrl(): string {
    return this.path
  }

  get ip(): string {
    return this.batch.ip
  }

  get protocol(): string {
    return this.batch.protocol
  }

  get host(): string {
    return this.batch.host
  }

  set(field: string | Record<string, string>, value?: string): void {
    if (typeof field === 'string') this.headers[field.toLowerCase()] = String(value)
    else for (const name in field) this.headers[name.toLowerCase()] = String(field[name])
  }

  remove(field: string): void {
    delete this.headers[field.toLowerCase()]
  }
}
