import { test } from 'uvu'
import * as assert from 'uvu/assert'
import Koa, { type Context } from 'koa'
import compose from 'koa-compose'
import type { AddressInfo } from 'node:net'
import { answerErrors } from '../../src/http/render.ts'
import { requestState } from '../../src/http/request-state.ts'
import { GatewayError } from '../../src/errors.ts'
import { silentLogger } from '../../src/logger.ts'

/**
 * The error boundary (answerErrors): a thrown error becomes the operation's JSON answer, and the
 * mapper a step left on the request state (the let-go guard of a held device) words it first, so a
 * send whose device was let go meanwhile answers 503 for a retry, not 409.
 */
async function answerOf(mode: 'mirror' | 'always200', step: (ctx: Context) => unknown) {
  const app = new Koa()
  app.use(compose<Context>([answerErrors(mode, silentLogger), step]))
  const server = app.listen(0, '127.0.0.1')
  await new Promise(resolve => server.once('listening', resolve))
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { method: 'POST' })
    return { code: response.status, type: response.headers.get('content-type'), retryAfter: response.headers.get('retry-after'), body: await response.json() }
  } finally {
    server.close()
  }
}

const disconnected = () => {
  throw new GatewayError('not-connected')
}

test('a thrown error is answered as the operation words it, typed JSON, its status as the HTTP code', async () => {
  const answer = await answerOf('mirror', disconnected)
  assert.is(answer.code, 409)
  assert.is(answer.type, 'application/json; charset=utf-8')
  assert.equal(answer.body, { status: 409, message: 'Dispositivo desconectado.' })
})

test('under always200 the HTTP code is 200 and the body keeps the status', async () => {
  const answer = await answerOf('always200', disconnected)
  assert.is(answer.code, 200)
  assert.equal(answer.body, { status: 409, message: 'Dispositivo desconectado.' })
})

test("the request's error mapper words the error first: a device let go during the send is 503 with Retry-After", async () => {
  const answer = await answerOf('mirror', ctx => {
    requestState(ctx).errorMapper = err => (err instanceof GatewayError && err.code === 'not-connected' ? new GatewayError('holder-unavailable') : err)
    return disconnected()
  })
  assert.is(answer.code, 503)
  assert.is(answer.retryAfter, '5')
  assert.equal(answer.body, { status: 503, message: 'O dispositivo está mudando de instância. Tente novamente em instantes.' })
})

test('an error the mapper leaves alone keeps its own answer', async () => {
  const answer = await answerOf('mirror', ctx => {
    requestState(ctx).errorMapper = err => err
    throw new GatewayError('device-not-found')
  })
  assert.is(answer.code, 404)
})

test.run()
