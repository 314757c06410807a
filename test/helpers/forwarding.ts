import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import Koa from 'koa'
import type { Test } from 'uvu'
import type { OutgoingMessage, SentMessage } from '../../src/index.ts'
import { MemoryNetwork, MemoryTransport } from '../../adapters/transport-memory/index.ts'
import { bodyReader } from '../../src/http/request-body.ts'
import type { Context, Middleware, Next } from 'koa'
import { forwardOperation, relayAnswer } from '../../src/http/forwarding/send.ts'
import { forwardedRequestReader } from '../../src/http/forwarding/receive.ts'
import { requestState, type ForwardedFrom } from '../../src/http/request-state.ts'
import type { Logger } from '../../src/logger.ts'
import type { HttpStatusMode } from '../../src/http/render.ts'
import { answerError } from '../../src/http/render.ts'
import { silentLogger } from '../../src/logger.ts'
import { sendingGateway, type SendingGateway } from './messaging.ts'
import { listen } from './http.ts'
import { freePort } from './standalone.ts'

export const SECRET = 'forwarding-test-secret-0123456789'

/** The instance id of the holder of startHolder (what forwards to it are signed for). */
export const HOLDER_ID = 'instance-holder'

/** A memory transport that keeps every message it was asked to send. */
export class RecordingTransport extends MemoryTransport {
  readonly sent: OutgoingMessage[] = []

  override async send(deviceId: string, to: string, message: OutgoingMessage): Promise<SentMessage> {
    this.sent.push(message)
    return super.send(deviceId, to, message)
  }
}

/** What the holder's app saw of each request that reached the gateway's routes. */
export interface Marked {
  path: string
  forwardedBy: unknown
  forwardedFrom: ForwardedFrom | undefined
}

/**
 * A holder: a gateway with a linked device (sendingGateway), served a second time behind
 * verifyForwardedRequests, as a clustered gateway will serve its routes.
 */
export async function startHolder(): Promise<{ g: SendingGateway; transport: RecordingTransport; url: string; marked: Marked[]; stop(): Promise<void> }> {
  const network = new MemoryNetwork()
  const transport = new RecordingTransport({ network })
  const g = await sendingGateway({ network, transport, mediaMaxBytes: 256 * 1024 })
  const marked: Marked[] = []
  const app = new Koa()
  app.use(verifyForwardedRequests(SECRET, { limitBytes: 1024 * 1024, instanceId: HOLDER_ID, httpStatus: 'mirror', logger: silentLogger }))
  app.use(async (ctx, next) => {
    const forwardedFrom = requestState(ctx).forwardedFrom
    marked.push({ path: ctx.path, forwardedBy: forwardedFrom?.instanceId, forwardedFrom })
    await next()
  })
  app.use(g.t.gateway.routes())
  const server = await listen(app)
  return { g, transport, url: server.url, marked, stop: async () => (await server.stop(), await g.stop()) }
}

/**
 * An instance that holds no device: it reads each body as the gateway does and forwards it to
 * `holderUrl`, answering with the holder's answer or, when the forward fails, the error answer,
 * as the router will for a device held elsewhere.
 */
export async function startForwarder(holderUrl: string, options: { secret?: string; timeoutMs?: number } = {}) {
  const readBody = bodyReader(1024 * 1024, 30_000)
  const app = new Koa()
  app.use(async ctx => {
    try {
      const body = await readBody(ctx)
      const answer = await forwardOperation({
        baseUrl: holderUrl,
        path: ctx.path,
        fields: body.fields,
        uploads: body.uploads,
        raw: body.raw,
        secret: options.secret ?? SECRET,
        from: 'instance-entry',
        to: HOLDER_ID,
        timeoutMs: options.timeoutMs,
        clientIp: ctx.ip,
        clientBaseUrl: `${ctx.protocol}://${ctx.host}`,
      })
      relayAnswer(ctx, answer)
    } catch (err) {
      answerError(ctx, 'mirror', silentLogger, err)
    }
  })
  return listen(app)
}

/** A server that takes requests and answers each as `behaviour` says; counts them and keeps their bodies. */
export async function startFakeHolder(behaviour: 'destroy-mid-body' | 'destroy-after-body' | 'never-answer' | 'html' | 'trickle') {
  const requests: { url: string; headers: IncomingMessage['headers'] }[] = []
  const server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', headers: req.headers })
    if (behaviour === 'destroy-mid-body') return void req.once('data', () => req.socket.destroy())
    req.resume()
    req.on('end', () => {
      if (behaviour === 'destroy-after-body') req.socket.destroy()
      else if (behaviour === 'html') res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>')
      else if (behaviour === 'trickle') {
        // Its headers at once, then a byte of its JSON every 50 ms for 2 s: never idle that long.
        res.writeHead(200, { 'content-type': 'application/json' }).write('{"a":"')
        let bytes = 0
        const drip = setInterval(() => (++bytes < 40 ? res.write('x') : res.end('"}')), 50)
        res.once('close', () => clearInterval(drip))
      }
    })
  })
  server.listen(0, '127.0.0.1')
  await new Promise(resolve => server.once('listening', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    stop: () =>
      new Promise<void>(resolve => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A URL nothing listens on (a port that was just free, drawn where no connection's own port lands: `freePort`). */
export async function deadUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`
}

/**
 * Koa middleware in front of a test app's routes, as a clustered gateway verifies forwards: a
 * request carrying `x-zapgate-forwarded-by` is verified and marked as forwardedRequestReader does
 * (the gateway calls it from its body reader), a refused one answered 403 `forward-refused` in the
 * gateway's error format; any other request passes untouched.
 */
export function verifyForwardedRequests(
  secret: string | Buffer,
  options: { limitBytes: number; instanceId: string; httpStatus: HttpStatusMode; logger: Logger; toleranceMs?: number },
): Middleware {
  const read = forwardedRequestReader(secret, options.limitBytes, options.instanceId, options.toleranceMs)
  return async function gatewayForwarded(ctx: Context, next: Next) {
    try {
      await read(ctx)
    } catch (err) {
      return answerError(ctx, options.httpStatus, options.logger, err)
    }
    await next()
  }
}

/** A holder and a forwarding instance in front of it, started before `test`'s cases and stopped after them (its context's `holder` and `entry`). */
export function withHolderAndForwarder(test: Test<ForwardingPair>): void {
  test.before(async ctx => {
    ctx.holder = await startHolder()
    ctx.entry = await startForwarder(ctx.holder.url)
  })
  test.after(async ctx => {
    await ctx.entry.stop()
    await ctx.holder.stop()
  })
}

/** The context of withHolderAndForwarder's tests. */
export type ForwardingPair = { holder: Awaited<ReturnType<typeof startHolder>>; entry: Awaited<ReturnType<typeof startForwarder>> }
