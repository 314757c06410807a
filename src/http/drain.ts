import { Stream } from 'node:stream'
import type { Context, Middleware, Next } from 'koa'
import { GatewayError } from '../errors.ts'
import { errorAnswer } from '../operations/error-answers.ts'
import { sendAnswer, type HttpStatusMode } from './render.ts'

/** The shutdown drain: counts the requests in flight; once draining, a new one is 503 `shutting-down` (HTTP 503 on the GET routes even under always200: load balancers read /health's), every answer `Connection: close`. */
export class RequestDrain {
  private inFlight = 0
  private draining = false
  private idle: (() => void) | undefined

  constructor(private readonly mode: HttpStatusMode) {}

  /** The router middleware (first on every gateway route): counts, and refuses while draining. */
  middleware(): Middleware {
    return (ctx: Context, next: Next) => {
      if (this.draining) {
        const answer = errorAnswer(new GatewayError('shutting-down'))
        ctx.set({ Connection: 'close', 'Retry-After': String(answer.retryAfterSeconds) })
        return sendAnswer(ctx, ctx.method === 'POST' ? this.mode : 'mirror', { status: answer.status, message: answer.message })
      }
      this.inFlight++
      const answered = () => {
        if (this.draining) ctx.set('Connection', 'close')
        // A streamed answer (a media download) is counted until it is written; one whose client has gone already (its `close` came) is done.
        if (ctx.body instanceof Stream && !ctx.res.writableEnded && !ctx.res.closed) ctx.res.once('close', () => this.done())
        else this.done()
      }
      // Chained, not awaited in an async function: a promise less per request.
      return next().then(answered, err => {
        answered()
        throw err
      })
    }
  }

  /** Refuse new requests from now on; resolves once every request in flight is answered, or after `graceMs`. Resolves with how many were left unanswered. */
  async drain(graceMs: number): Promise<number> {
    this.draining = true
    if (this.inFlight === 0) return 0
    let timer: NodeJS.Timeout | undefined
    await Promise.race([new Promise<void>(resolve => (this.idle = resolve)), new Promise<void>(resolve => (timer = setTimeout(resolve, graceMs)))])
    clearTimeout(timer)
    return this.inFlight
  }

  // --- Internal helpers ---

  private done(): void {
    this.inFlight--
    if (this.inFlight === 0) this.idle?.()
  }
}
