import Koa from 'koa'
import { Webhook } from 'standardwebhooks'
import { listen } from './http.ts'
import type { GatewayOptions } from '../../src/index.ts'
import { startGateway, waitFor, type TestGateway } from './gateway.ts'
import { DEVICE_PHONE } from './messaging.ts'

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
    const chunks: Buffer[] = []
    for await (const chunk of ctx.req) chunks.push(chunk) // the bytes first, decoded once: a character may straddle two chunks
    const body = Buffer.concat(chunks).toString('utf8')
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

/** A gateway with an account and a linked device whose webhook is a fresh receiver. */
export interface ReceiverWorld {
  t: TestGateway
  receiver: Receiver
  authkey: string
  device: { id: string; appkey: string; webhookSecret: string }
}

/** Start a receiver and a gateway (private URLs allowed, for the receiver; `options` on top) with device `name` on DEVICE_PHONE. */
export async function receiverWorld(name: string, options: GatewayOptions = {}): Promise<ReceiverWorld> {
  const receiver = await startReceiver()
  const t = await startGateway({ allowPrivateUrls: true, ...options })
  const { authkey } = await t.register()
  const device = await t.linkedDevice(authkey, name, DEVICE_PHONE, { webhook: receiver.url })
  return { t, receiver, authkey, device }
}

/** Stop the gateway and the receiver of a world (either may be missing when its start failed). */
export async function stopReceiverWorld(world: Partial<ReceiverWorld>): Promise<void> {
  await world.t?.stop()
  await world.receiver?.stop()
}
