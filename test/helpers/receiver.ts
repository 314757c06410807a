import Koa from 'koa'
import { Webhook } from 'standardwebhooks'
import { listen } from './http.ts'
import { waitFor } from './gateway.ts'

/** One request a receiver got. */
export interface ReceivedHook {
  headers: Record<string, string>
  /** The raw body, exactly as sent (what the signature covers). */
  body: string
  payload: any
  at: number
}

/** How a receiver answers a request: a status, or a status with headers and a delay. */
export type ReceiverAnswer = number | { status: number; headers?: Record<string, string>; delayMs?: number }

/** A local webhook receiver (a Koa app on a free port) that records every request. */
export interface Receiver {
  url: string
  hooks: ReceivedHook[]
  /** Requests whose answer has been sent. */
  answered: number
  /** Change how the next requests are answered (`index` counts every request, from 0). */
  answer(fn: (hook: ReceivedHook, index: number) => ReceiverAnswer): void
  /** Wait until `count` requests arrived. */
  waitForHooks(count: number, timeoutMs?: number): Promise<ReceivedHook[]>
  /** The payloads, verified against `secret` with the standardwebhooks library (throws on a bad signature). */
  verified(secret: string): any[]
  stop(): Promise<void>
}

/** Start a receiver that answers 200 unless told otherwise, on `port` (default: a free one). */
export async function startReceiver(answer: (hook: ReceivedHook, index: number) => ReceiverAnswer = () => 200, port = 0): Promise<Receiver> {
  let respond = answer
  const app = new Koa()
  const receiver = {} as Receiver
  const timers = new Set<NodeJS.Timeout>()
  app.use(async ctx => {
    let body = ''
    for await (const chunk of ctx.req) body += chunk
    let payload: unknown
    try {
      payload = JSON.parse(body)
    } catch {
      payload = undefined
    }
    const hook: ReceivedHook = { headers: { ...ctx.headers } as Record<string, string>, body, payload, at: Date.now() }
    const index = receiver.hooks.length
    receiver.hooks.push(hook)
    const chosen = respond(hook, index)
    const { status, headers = {}, delayMs = 0 } = typeof chosen === 'number' ? { status: chosen } : chosen
    if (delayMs > 0) await new Promise(resolve => timers.add(setTimeout(resolve, delayMs)))
    for (const [name, value] of Object.entries(headers)) ctx.set(name, value)
    ctx.status = status
    ctx.body = { ok: status < 300 }
    receiver.answered++
  })
  const server = await listen(app, port)
  Object.assign(receiver, {
    url: `${server.url}/hook`,
    hooks: [],
    answered: 0,
    answer(fn: typeof answer) {
      respond = fn
    },
    async waitForHooks(count: number, timeoutMs = 10_000) {
      await waitFor(() => receiver.hooks.length >= count, timeoutMs, `${count} webhook requests (got ${receiver.hooks.length})`)
      return receiver.hooks
    },
    verified(secret: string) {
      return receiver.hooks.map(hook => new Webhook(secret).verify(hook.body, hook.headers))
    },
    async stop() {
      for (const timer of timers) clearTimeout(timer)
      await server.stop()
    },
  })
  return receiver
}
