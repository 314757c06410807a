/**
 * Mounting the gateway inside an existing Koa app: the host keeps its own body parser, error
 * handler and routes; the gateway lives under /whatsapp with its own parsing and error rendering.
 *
 *   PORT=4000 npx tsx --conditions=source examples/mount-in-existing-app.ts
 */
import Koa from 'koa'
import Router from '@koa/router'
import bodyParser from 'koa-bodyparser'
import { pathToFileURL } from 'node:url'
import { createGateway } from 'zapgate'
import { memoryTransport, MemoryNetwork } from 'zapgate/adapters/transport-memory'
import { serve } from './serve.ts'

/** Start the host app on `port` (0 for any); resolves with the server and a stop function. */
export async function startHostApp(port = 0) {
  const app = new Koa()
  // The host's own error handler renders its own shape: the gateway's routes never reach it.
  app.use(async (ctx, next) => {
    try {
      await next()
    } catch (err) {
      ctx.status = (err as { status?: number }).status ?? 500
      ctx.body = { error: (err as Error).message, host: true }
    }
  })
  // The host's parser runs first and the gateway uses what it parsed; a body it refuses never reaches the
  // gateway, so its limits (koa-bodyparser's defaults: 1 MB of JSON, 56 KB of form) are raised to the
  // gateway's bodyLimit (20 MB: base64 media).
  app.use(bodyParser({ jsonLimit: '20mb', formLimit: '20mb' }))

  const network = new MemoryNetwork()
  const gateway = await createGateway({ transport: memoryTransport({ network }) })

  const host = new Router()
  host.get('/health', ctx => {
    ctx.body = { ok: true }
  })
  host.post('/echo', ctx => {
    ctx.body = { youSent: ctx.request.body }
  })
  host.get('/boom', () => {
    throw Object.assign(new Error('host failure'), { status: 418 })
  })
  host.use('/whatsapp', gateway.router.routes(), gateway.router.allowedMethods())
  app.use(host.routes()).use(host.allowedMethods())

  return { ...(await serve(app, port, gateway)), network, gateway }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { url } = await startHostApp(Number(process.env.PORT ?? 4000))
  console.log(`host app on ${url}: GET /health, POST /echo, gateway under ${url}/whatsapp/api/...`)
}
