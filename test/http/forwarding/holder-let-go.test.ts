import { test } from 'uvu'
import * as assert from 'uvu/assert'
import Koa, { type Context, type Next } from 'koa'
import compose from 'koa-compose'
import type { AddressInfo } from 'node:net'
import { answerErrors } from '../../../src/http/render.ts'
import { requestState } from '../../../src/http/request-state.ts'
import { routeToHolder } from '../../../src/http/forwarding/to-holder.ts'
import { operationTable } from '../../../src/operations/table.ts'
import { GatewayError, isGatewayError } from '../../../src/errors.ts'
import { silentLogger } from '../../../src/logger.ts'
import type { SessionRouting } from '../../../src/domain/cluster/session-routing.ts'
import type { OperationServices } from '../../../src/operations/operation.ts'
import type { Device } from '../../../src/domain/devices.ts'

/**
 * The holder step on a device held here with its session open: the operation runs, and a
 * `not-connected` it throws is worded by the routing's let-go guard at the error boundary (a device
 * let go while the send ran answers 503 for a retry; one held all along, 409).
 */
async function answerWhen(letGo: boolean) {
  const routing = {
    holdsHere: () => true,
    connected: () => ({ state: 'open', connected: true }),
    letGoGuard: () => (err: unknown) => (letGo && isGatewayError(err, 'not-connected') ? new GatewayError('holder-unavailable') : err),
  } as unknown as SessionRouting
  const entry = operationTable.find(path => path.path === '/api/create-message')!
  const { holder } = routeToHolder(entry, {
    services: {} as OperationServices,
    routing,
    baseUrlOf: () => '',
    forward: () => Promise.reject(new Error('not a cluster')),
  })
  const declared = (ctx: Context, next: Next) => {
    const state = requestState(ctx)
    state.session = 'connected'
    state.device = { id: 'd1', linked: true } as Device
    return next()
  }
  const operation = () => Promise.reject(new GatewayError('not-connected'))
  const app = new Koa()
  app.use(compose<Context>([answerErrors('mirror', silentLogger), declared, holder, operation]))
  const server = app.listen(0, '127.0.0.1')
  await new Promise(resolve => server.once('listening', resolve))
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { method: 'POST' })
    return { code: response.status, body: (await response.json()) as { status: number; message: string } }
  } finally {
    server.close()
  }
}

test('a device let go while the operation ran: 503 holder-unavailable, the client retries', async () => {
  const answer = await answerWhen(true)
  assert.is(answer.code, 503)
  assert.is(answer.body.message, 'O dispositivo está mudando de instância. Tente novamente em instantes.')
})

test('a device held all along: the session is really closed, 409', async () => {
  const answer = await answerWhen(false)
  assert.is(answer.code, 409)
  assert.is(answer.body.message, 'Dispositivo desconectado.')
})

test.run()
