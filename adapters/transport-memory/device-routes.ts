import Router from '@koa/router'
import type { Context, Next } from 'koa'
import bodyParser from 'koa-bodyparser'
import { TransportError } from 'zapgate'
import type { IncomingMessage, Logger } from 'zapgate'
import { parsePhone } from './addresses.ts'
import type { MemoryNetwork } from './network.ts'
import { StreamConnection } from './stream-connection.ts'
import type { DeviceCredentials, LinkChallengeSpec } from './types.ts'
import { PING_MS, STREAM_TYPE, TRANSPORT_STATUS, decodeOutgoing } from './wire.ts'
import type { Ack } from './wire.ts'

/** Options of the device routes. */
interface DeviceRoutesOptions {
  /** How long a message waits for the gateway's ack before the device's next one goes (default 5000 ms). */
  ackWaitMs?: number
  /** Messages a device connection may leave unacked; the next one ends its stream (default 1000). */
  unackedLimit?: number
  logger?: Logger
}

/** The device routes and what to stop with the server. */
interface DeviceRoutes {
  router: Router
  /** End every stream (gateways see them lost and retry) and stop the pings. */
  close(): void
}

/**
 * The simulator server's device side (docs/simulator.md): gateways open a stream per pending link
 * (`POST /_sim/devices/:id/link`) and per device connection (`POST /_sim/devices/:id/connect` with
 * the device's credentials), ack frames, and act through the connection they hold
 * (`/_sim/connections/:id/...`). A connection that another one replaced, or that ended, can no
 * longer act (409 not-connected).
 */
export function deviceRoutes(network: MemoryNetwork, options: DeviceRoutesOptions = {}): DeviceRoutes {
  const router = new Router({ prefix: '/_sim' })
  const connections = new Map<string, StreamConnection>()
  const linkStreams = new Map<string, StreamConnection>()
  const hooks = {
    redeliver: (deviceId: string, messages: IncomingMessage[]) => network.devices.redeliver(deviceId, messages),
    ended(connection: StreamConnection) {
      if (connection.kind === 'device') options.logger?.debug({ deviceId: connection.deviceId }, 'device connection ended')
      connections.delete(connection.id)
      if (connection.kind === 'device') void network.disconnect(connection.deviceId, connection.endpoint)
      else {
        if (linkStreams.get(connection.deviceId) === connection) linkStreams.delete(connection.deviceId)
        void network.cancelLink(connection.deviceId, connection.endpoint)
      }
    },
  }
  const open = (deviceId: string, kind: 'link' | 'device') =>
    new StreamConnection(deviceId, kind, hooks, options.ackWaitMs ?? 5_000, options.unackedLimit ?? 1_000)
  const pings = setInterval(() => {
    for (const connection of connections.values()) connection.write({ type: 'ping' })
  }, PING_MS)
  pings.unref()

  router.use(answerErrors(options.logger))
  router.use(bodyParser({ enableTypes: ['json'], jsonLimit: '128mb' }))

  router.post('/devices/:deviceId/link', async ctx => {
    const { deviceId } = ctx.params
    const connection = open(deviceId, 'link')
    await network.beginLink(deviceId, connection.endpoint, challengeOf(ctx.request.body))
    linkStreams.get(deviceId)?.end({ type: 'closed', state: 'closed', reason: 'another link began' })
    linkStreams.set(deviceId, connection)
    stream(ctx, connection, connections)
    connection.write({ type: 'linking', connection: connection.id })
  })

  router.post('/devices/:deviceId/connect', async ctx => {
    const { deviceId } = ctx.params
    const connection = open(deviceId, 'device')
    const replacedBefore = network.stats().replaced
    const result = await network.connect(deviceId, credentialsOf(ctx.request.body), connection.endpoint)
    // Who connected when, and whether it closed another open connection (the connection id is a secret: not logged).
    options.logger?.debug(
      { deviceId, state: result.state, from: ctx.req.socket.remotePort, replaced: network.stats().replaced > replacedBefore },
      'device connection opened',
    )
    if (result.state !== 'open') {
      ctx.status = 401
      ctx.body = { status: 401, state: 'logged-out', message: result.reason }
      return
    }
    stream(ctx, connection, connections)
    connection
      .request({ type: 'open', connection: connection.id, ...(result.lid ? { lid: result.lid } : {}) })
      .then(() => network.flush(deviceId, connection.endpoint))
      .catch(() => undefined)
  })

  router.post('/devices/:deviceId/logout', async ctx => {
    await network.logout(ctx.params.deviceId, credentialsOf(ctx.request.body))
    ctx.body = { status: 200, message: 'logged out' }
  })

  router.post('/connections/:id/ack', ctx => {
    const { seq, error } = (ctx.request.body ?? {}) as Partial<Ack>
    if (!Number.isSafeInteger(seq)) throw new TransportError('invalid', 'seq must be an integer')
    if (!connections.get(ctx.params.id)?.ack({ seq: seq!, ...(error ? { error } : {}) }))
      throw new TransportError('not-found', 'no such frame waits for an ack')
    ctx.body = { status: 200, message: 'acked' }
  })

  router.delete('/connections/:id', async ctx => {
    const connection = connections.get(ctx.params.id)
    if (!connection) throw new TransportError('not-found', 'no such connection')
    connection.end({ type: 'closed', state: 'closed', reason: 'closed by the device' })
    ctx.body = { status: 200, message: 'closed' }
  })

  router.post('/connections/:id/:command', async ctx => {
    const connection = connections.get(ctx.params.id)
    if (connection?.kind !== 'device') throw new TransportError('not-connected', 'the device is not connected (this connection ended)')
    const { deviceId, endpoint } = connection
    const body = (ctx.request.body ?? {}) as Record<string, any>
    switch (ctx.params.command) {
      case 'send':
        ctx.body = await network.sendFromDevice(deviceId, body.to, decodeOutgoing(body.message), endpoint)
        return
      case 'read':
        await network.markRead(deviceId, body.target, endpoint)
        ctx.body = { status: 200, message: 'read' }
        return
      case 'group-info':
        ctx.body = { group: (await network.groupInfo(deviceId, body.group, endpoint)) ?? null }
        return
      case 'group-create':
        ctx.body = { group: await network.groupCreate(deviceId, body.subject, body.participants, endpoint) }
        return
      case 'group-join':
        ctx.body = { id: (await network.groupJoin(deviceId, body.invite, endpoint)) ?? null }
        return
      default:
        throw new TransportError('not-found', `no command ${ctx.params.command}`)
    }
  })

  return {
    router,
    close() {
      clearInterval(pings)
      for (const connection of [...connections.values()]) connection.end()
    },
  }
}

// --- Internal helpers ---

/** Answer the connection's frames as the response: a stream of JSON lines until either side ends it. */
function stream(ctx: Context, connection: StreamConnection, connections: Map<string, StreamConnection>): void {
  connections.set(connection.id, connection)
  ctx.status = 200
  ctx.type = STREAM_TYPE
  ctx.set('cache-control', 'no-store')
  ctx.body = connection.stream
  ctx.res.once('close', () => connection.gone())
}

function challengeOf(body: unknown): LinkChallengeSpec {
  const { qr, code, phone } = (body ?? {}) as Record<string, unknown>
  if (typeof qr === 'string' && qr.length > 0 && qr.length <= 1000) return { qr }
  const digits = parsePhone(phone)
  if (typeof code === 'string' && /^[A-Za-z0-9]{8}$/.test(code) && digits) return { code, phone: digits }
  throw new TransportError('invalid', 'a link is {qr} or {code, phone}')
}

function credentialsOf(body: unknown): DeviceCredentials {
  const { phone, secret } = (body ?? {}) as Record<string, unknown>
  const digits = parsePhone(phone)
  if (!digits || (secret !== undefined && typeof secret !== 'string')) throw new TransportError('invalid', 'credentials are {phone, secret}')
  return secret === undefined ? { phone: digits } : { phone: digits, secret }
}

/** TransportErrors and bad bodies answer `{status, code, message}`; anything else is a logged 500. */
function answerErrors(logger?: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next()
    } catch (err) {
      const status = err instanceof TransportError ? (TRANSPORT_STATUS[err.code] ?? 502) : (err as { status?: number })?.status
      const known = typeof status === 'number' && status >= 400 && status < 500
      if (!(err instanceof TransportError) && !known) logger?.error({ err }, 'simulator device route failed')
      ctx.status = err instanceof TransportError || known ? status! : 500
      const code = err instanceof TransportError ? err.code : ctx.status < 500 ? 'invalid' : 'failed'
      ctx.body = { status: ctx.status, code, message: err instanceof TransportError || known ? (err as Error).message : 'internal error' }
    }
  }
}
