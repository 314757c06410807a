import assert from 'node:assert/strict'
import { createServer, request as httpRequest } from 'node:http'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { suite } from 'uvu'
import { silentLogger } from '../../src/logger.ts'
import { TransportError } from '../../src/ports/transport.ts'
import { memoryTransport, simulatorServer } from '../../adapters/transport-memory/index.ts'
import type { StoredSession } from '../../adapters/transport-memory/index.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { post } from '../helpers/http.ts'

const PHONE = '5511999990001'
const FRIEND = '5511988880002'

const test = suite('transport-memory on a simulator server: a connection that drops mid-answer')

/** A server whose `handle` answers each request (for a stand-in of the simulator, or a proxy in front of one). */
async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; server: Server }> {
  const server = createServer(handle)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}

/** Answer `status` with the first bytes of a JSON body, then drop the connection (a server that died mid-answer). */
function dropMidAnswer(req: IncomingMessage, res: ServerResponse, status: number): void {
  req.resume()
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': 100 })
  res.write('{"status":')
  setTimeout(() => res.destroy(), 20)
}

/** Whether `promise` settles before `ms` (a promise that never settles would hold the test until the runner kills it). */
async function settles(promise: Promise<unknown>, ms = 10_000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<false>(resolve => (timer = setTimeout(resolve, ms, false)))
  const done = promise.then(
    () => true as const,
    () => true as const,
  )
  return Promise.race([done, late]).finally(() => clearTimeout(timer))
}

/** Pass `req` on to the simulator at `simUrl` and its answer back, unless `answered` takes the answer (true). */
function passOn(req: IncomingMessage, res: ServerResponse, simUrl: string, answered?: (answer: IncomingMessage) => boolean): void {
  const upstream = httpRequest(new URL(req.url!, simUrl), { method: req.method, headers: req.headers }, answer => {
    if (answered?.(answer)) return
    res.writeHead(answer.statusCode!, answer.headers)
    answer.pipe(res)
  })
  req.pipe(upstream)
}

/** A started transport on the simulator through `proxyUrl`, its device d1 linked to PHONE (the QR scanned on the simulator itself). */
async function linkedThrough(proxyUrl: string, simUrl: string, storage = memoryStorage()) {
  const transport = memoryTransport({ simUrl: proxyUrl })
  await transport.start({ storage, logger: silentLogger, emit: async () => {} })
  const challenge = await transport.link('d1', {})
  assert.ok(challenge.kind === 'qr')
  assert.equal((await post(`${simUrl}/_sim/scan`, { qr: challenge.qr, phone: PHONE })).status, 200)
  return transport
}

/** Stop the transport, the proxy and the simulator server. */
async function closeAll(transport: { stop(): Promise<void> }, proxy: { server: Server }, sim: { close(): Promise<void> }): Promise<void> {
  await transport.stop()
  proxy.server.closeAllConnections()
  await new Promise(resolve => proxy.server.close(resolve))
  await sim.close()
}

test('a command whose answer is cut off is `unreachable` (HTTP 503 from the gateway), as a server that cannot be reached', async () => {
  const sim = await simulatorServer({ port: 0, host: '127.0.0.1' })
  // A proxy in front of the simulator: every call passes, except a device's sends, whose answer is cut off.
  const proxy = await serve((req, res) => {
    if (/\/_sim\/connections\/[^/]+\/send$/.test(req.url ?? '')) return dropMidAnswer(req, res, 200)
    passOn(req, res, sim.url)
  })
  const transport = await linkedThrough(proxy.url, sim.url)
  assert.equal((await transport.status('d1')).state, 'open')

  await assert.rejects(
    transport.send('d1', FRIEND, { kind: 'text', text: 'cut off' }),
    (err: unknown) => err instanceof TransportError && err.code === 'unreachable' && /cannot be reached/.test(err.message),
  )
  await closeAll(transport, proxy, sim)
})

test('a refusal of a stream cut off mid-answer fails link() as unreachable and leaves connect() retrying, instead of hanging', async () => {
  const other = await serve((req, res) => dropMidAnswer(req, res, 401))
  const storage = memoryStorage()
  await storage.set('session:d1', { phone: PHONE, linkedAt: Date.now(), secret: 's'.repeat(32) } satisfies StoredSession)
  const transport = memoryTransport({ simUrl: other.url })
  await transport.start({ storage, logger: silentLogger, emit: async () => {} })

  const link = transport.link('d2', {})
  assert.ok(await settles(link), 'link() settles')
  await assert.rejects(link, (err: unknown) => err instanceof TransportError && err.code === 'unreachable')

  assert.ok(await settles(transport.connect('d1')), 'connect() settles')
  // Half an answer is no refusal: the device keeps its credentials and the connection is retried.
  assert.equal((await transport.status('d1')).state, 'connecting')
  assert.ok(await storage.get('session:d1'), 'credentials kept')
  await transport.stop()
  other.server.closeAllConnections()
  await new Promise(resolve => other.server.close(resolve))
})

test('a logout the simulator server did not hear of fails and leaves the device open on its connection (sends still go), as in process', async () => {
  const sim = await simulatorServer({ port: 0, host: '127.0.0.1' })
  let failLogout = true
  // A proxy in front of the simulator: every call passes, except the first logout, whose answer is cut off.
  const proxy = await serve((req, res) => {
    if (failLogout && /\/_sim\/devices\/[^/]+\/logout$/.test(req.url ?? '')) {
      failLogout = false
      return dropMidAnswer(req, res, 200)
    }
    passOn(req, res, sim.url)
  })
  const storage = memoryStorage()
  const transport = await linkedThrough(proxy.url, sim.url, storage)

  await assert.rejects(transport.logout('d1'), (err: unknown) => err instanceof TransportError)
  assert.ok(await storage.get('session:d1'), 'the credentials stay')
  assert.equal(sim.network.linkedPhone('d1'), PHONE, 'still linked on the server')
  assert.equal((await transport.status('d1')).state, 'open')
  // The status says open: the device's connection is still there, so a send goes.
  await transport.send('d1', FRIEND, { kind: 'text', text: 'after a failed logout' })
  assert.equal(sim.network.stats().connections, 1)

  await transport.logout('d1')
  assert.equal(await storage.get('session:d1'), undefined)
  assert.equal(sim.network.linkedPhone('d1'), undefined, 'a retry unlinks the device')
  assert.equal((await transport.status('d1')).state, 'closed')
  await closeAll(transport, proxy, sim)
})

test('a logout given up (its signal aborted) before the server answered rejects and keeps the device open, instead of waiting on', async () => {
  const sim = await simulatorServer({ port: 0, host: '127.0.0.1' })
  let logoutArrived = () => {}
  const arrived = new Promise<void>(resolve => (logoutArrived = resolve))
  // A proxy in front of the simulator that never answers (nor forwards) a logout: a server that hangs.
  const proxy = await serve((req, res) => {
    if (/\/_sim\/devices\/[^/]+\/logout$/.test(req.url ?? '')) return void (req.resume(), logoutArrived())
    passOn(req, res, sim.url)
  })
  const storage = memoryStorage()
  const transport = await linkedThrough(proxy.url, sim.url, storage)

  const abort = new AbortController()
  const logout = transport.logout('d1', abort.signal)
  await arrived
  abort.abort()
  // The gateway aborts at its deadline and waits for the answer (guardTransport): it must come, and say nothing was unlinked.
  assert.ok(await settles(logout), 'the aborted logout settles')
  await assert.rejects(logout, (err: unknown) => err instanceof TransportError && err.code === 'timeout')
  assert.ok(await storage.get('session:d1'), 'the credentials stay')
  assert.equal(sim.network.linkedPhone('d1'), PHONE)
  assert.equal((await transport.status('d1')).state, 'open')
  await transport.send('d1', FRIEND, { kind: 'text', text: 'still linked' })
  await assert.rejects(transport.logout('d1', AbortSignal.abort()), (err: unknown) => err instanceof TransportError && err.code === 'timeout')
  await closeAll(transport, proxy, sim)
})

test('a logout the server heard of but whose answer was lost ends with the device unlinked and its status saying so, never open', async () => {
  const sim = await simulatorServer({ port: 0, host: '127.0.0.1' })
  // A proxy in front of the simulator: a logout reaches it, but its answer is cut off on the way back.
  const proxy = await serve((req, res) => {
    const logout = /\/_sim\/devices\/[^/]+\/logout$/.test(req.url ?? '')
    passOn(req, res, sim.url, answer => logout && (answer.resume(), answer.on('end', () => dropMidAnswer(req, res, 200)), true))
  })
  const storage = memoryStorage()
  const transport = await linkedThrough(proxy.url, sim.url, storage)

  // Whether the logout answers done (it saw the server close its connection as unlinked first) or failed, the device ends unlinked.
  await transport.logout('d1').catch(() => undefined)
  assert.equal(sim.network.linkedPhone('d1'), undefined, 'unlinked on the server')
  for (let tries = 0; (await transport.status('d1')).state === 'open' && tries < 200; tries++) await new Promise(resolve => setTimeout(resolve, 25))
  assert.ok(['closed', 'logged-out'].includes((await transport.status('d1')).state), 'no longer open')
  assert.equal(await storage.get('session:d1'), undefined, 'its credentials deleted')
  await closeAll(transport, proxy, sim)
})

test.run()
