import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { startStandalone, tempDir, type StandaloneServer } from '../helpers/standalone.ts'
import { startSimulator, type SimulatorProcess } from '../helpers/simulator.ts'
import { qrText } from '../helpers/cluster.ts'
import { waitFor } from '../helpers/gateway.ts'
import { post, request } from '../helpers/http.ts'
import { connect } from 'node:net'
import { exchange, openSocket, rawPost } from '../helpers/raw-http.ts'

/**
 * The standalone server's shutdown drain (issue 20.2): on SIGTERM it stops accepting connections,
 * answers every request in flight, then closes the sessions. The network is the simulator server (a
 * process of its own), so what reached it can be checked after the gateway is gone.
 */
const test = suite<{ sim?: SimulatorProcess; server?: StandaloneServer }>('examples/standalone.ts: SIGTERM drains the requests in flight')
test.after.each(async ctx => {
  await ctx.server?.kill('SIGKILL')
  await ctx.sim?.kill('SIGKILL')
})

const CONTACT = '5511970000001'

test('50 paced sends in flight at SIGTERM: 50 answers, each 200 one on the network, no socket error; a new connection is refused, a request on a kept-alive one gets 503', async ctx => {
  const sim = (ctx.sim = await startSimulator())
  const server = (ctx.server = await startStandalone({
    GATEWAY_SIM_URL: sim.url,
    GATEWAY_STORE: `sqlite://${join(tempDir(), 'gateway.sqlite')}`,
    GATEWAY_MIN_INTERVAL_MS: '100', // 50 sends take 5 s: well inside the 10 s grace, long enough to be in flight
    GATEWAY_RATE_LIMIT: 'off',
  }))
  const authkey = (
    await post(`${server.url}/api/auth`, {
      auth: 'registrar',
      nome: 'Ana',
      email: 'ana@example.com',
      senha: 'senha-secreta',
      telefone: '5511912345678',
      plano: '1',
    })
  ).body.data.authkey
  const created = await post(`${server.url}/api/v2/qrcode`, { authkey, setAppkey: 'lento' })
  assert.is((await post(`${sim.url}/_sim/scan`, { qr: qrText(created.body.qrcode), phone: '5511900000001' })).status, 200)
  await waitFor(
    async () => (await post(`${server.url}/api/developer`, { authkey, message: 'lento', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true,
    30_000,
    'the device to open',
  )

  // A kept-alive connection, idle when SIGTERM comes.
  const idle = connect(server.port, '127.0.0.1')
  await new Promise(resolve => idle.once('connect', resolve))
  assert.match(await exchange(idle, rawPost('/api/auth', {})), /^HTTP\/1\.1 401/)

  // 50 kept-alive connections the gateway has accepted (each answered once), so that each send
  // below reaches it: a connection still in the kernel's accept queue when the listening socket
  // closes is reset by the kernel, before any drain can see it (fresh fetch connections were, on a
  // loaded machine).
  const sockets = await Promise.all(Array.from({ length: 50 }, () => openSocket(server.url)))
  for (const socket of sockets) assert.match(await exchange(socket, rawPost('/api/auth', {})), /^HTTP\/1\.1 401/)
  const sentBefore = (await sim.stats()).sent
  const sends = sockets.map((socket, i) =>
    exchange(socket, rawPost('/api/create-message', { appkey: 'lento', authkey, to: CONTACT, message: `dreno ${i}` })).then(
      text => ({ i, answer: { status: Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1]) }, error: undefined as unknown }),
      (error: unknown) => ({ i, answer: undefined, error }),
    ),
  )
  // A few sends went out: every request has long been received (they are small, on loopback).
  await waitFor(async () => (await sim.stats()).sent - sentBefore >= 3, 30_000, 'the first sends')
  const exit = server.kill('SIGTERM')
  await waitFor(() => server.output().includes('shutting down'), 10_000, 'the shutdown to start')
  const refused = await new Promise<string>(resolve =>
    connect(server.port, '127.0.0.1')
      .once('connect', () => resolve('accepted'))
      .once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error')),
  )
  assert.is(refused, 'ECONNREFUSED', 'no new connection is accepted once the drain started')
  const kept = await exchange(idle, rawPost('/api/create-message', { appkey: 'lento', authkey, to: CONTACT, message: 'tarde' }))
  assert.match(kept, /^HTTP\/1\.1 503/, 'a request on a kept-alive connection during the drain is answered')
  assert.match(kept, /\r\nRetry-After: 5\r\n/i)
  assert.match(kept, /\r\nConnection: close\r\n/i)
  assert.is(JSON.parse(kept.slice(kept.indexOf('\r\n\r\n') + 4)).message, 'O gateway está sendo encerrado. Tente novamente em instantes.')

  const results = await Promise.all(sends)
  assert.is(await exit, 0)
  const errors = results.filter(r => r.error)
  assert.is(errors.length, 0, `socket errors: ${errors.map(r => String((r.error as Error).cause ?? r.error)).join('; ')}`)
  const ok = results.filter(r => r.answer!.status === 200)
  const statuses = results.map(r => r.answer!.status)
  assert.is(ok.length, 50, `answers: ${statuses.join(',')}`)
  const inbox = ((await request(`${sim.url}/_sim/inbox/${CONTACT}`)).body as { text?: string }[])
    .map(entry => entry.text)
    .filter(text => text?.startsWith('dreno '))
  assert.equal([...inbox].sort(), ok.map(r => `dreno ${r.i}`).sort(), 'each 200 answer is a message that reached the network, once')
  assert.is((await sim.stats()).sent - sentBefore, 50)
  assert.match(server.output(), /"msg":"stopped"/)
  console.log(`# SIGTERM with 50 sends in flight: ${ok.length} answered 200, ${inbox.length} on the network, ${errors.length} socket errors`)
})

test('GATEWAY_SHUTDOWN_GRACE_MS must be a number of ms', async () => {
  await startStandalone({ GATEWAY_SHUTDOWN_GRACE_MS: 'soon' }).then(
    server => server.kill('SIGKILL').then(() => assert.unreachable('should not start')),
    err => assert.match(String(err), /GATEWAY_SHUTDOWN_GRACE_MS must be a whole number of milliseconds/),
  )
})

test.run()
