import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { suite } from 'uvu'
import { TransportError } from '../../src/ports/transport.ts'
import type { SessionState, TransportEvent } from '../../src/ports/transport.ts'
import { transportContract } from '../../src/testing/transport-contract.ts'
import { memoryTransport, simulatorServer } from '../../adapters/transport-memory/index.ts'
import { silentLogger } from '../../src/logger.ts'
import type { StoredSession } from '../../adapters/transport-memory/index.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { freePort } from '../helpers/standalone.ts'
import { post, request } from '../helpers/http.ts'
import { remoteHarness } from './remote-harness.ts'
import type { RemoteGateway, RemoteHarness } from './remote-harness.ts'

const contract = suite('transport-memory on a simulator server: Transport contract')
transportContract(
  (name, fn) => contract(name, fn),
  () => remoteHarness(),
  { validatesTargets: true },
)
contract.run()

const PHONE = '5511999990001'
const FRIEND = '5511988880002'
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))
async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await condition()); await sleep(5)) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`)
  }
}
const code = (c: TransportError['code']) => (err: unknown) => err instanceof TransportError && err.code === c
const states = (events: TransportEvent[], deviceId = 'd1') => events.flatMap(e => (e.type === 'status' && e.deviceId === deviceId ? [e.status.state] : []))
const stats = async (h: RemoteHarness) => (await request(`${h.sim.url}/_sim/stats`)).body
const stateOf = async (g: { transport: RemoteGateway['transport'] }, deviceId = 'd1'): Promise<SessionState> => (await g.transport.status(deviceId)).state

/** Link d1 as PHONE through the harness's first gateway (QR scanned over HTTP). */
async function link(h: RemoteHarness): Promise<void> {
  const challenge = await h.transport.link('d1', {})
  await h.completeLink('d1', challenge, PHONE)
  assert.equal(await stateOf(h), 'open')
}

const shared = suite('transport-memory on a simulator server: one network, many gateways')

shared('a scan issues a secret that the transport keeps under session:<deviceId>, and the scan answers once the device is open', async () => {
  const h = await remoteHarness()
  await link(h)
  const stored = await h.storage.get<StoredSession>('session:d1')
  assert.equal(stored?.phone, PHONE)
  assert.match(stored?.secret ?? '', /^[A-Za-z0-9_-]{32}$/)
  assert.deepEqual(states(h.events), ['linking', 'open'])
  assert.deepEqual(await stats(h), { connections: 1, replaced: 0, sent: 0, received: 0, waiting: 0 })
  await h.close()
})

shared('a second gateway on the same store resumes the device, and the first is replaced for good with its credentials kept', async () => {
  const h = await remoteHarness()
  await link(h)
  const b = await h.gateway()
  await b.transport.connect('d1')
  assert.equal(await stateOf(b), 'open')
  await until(async () => (await stateOf(h)) === 'replaced', 'the first gateway to hear it was replaced')
  const replaced = h.events.findLast(e => e.type === 'status')
  assert.deepEqual(replaced, {
    type: 'status',
    deviceId: 'd1',
    status: { state: 'replaced', connected: false, phone: PHONE, reason: 'the session was opened elsewhere' },
  })
  assert.ok(await h.storage.get('session:d1'), 'credentials kept')
  await assert.rejects(h.transport.send('d1', FRIEND, { kind: 'text', text: 'from A' }), code('not-connected'))

  await sleep(600) // longer than the first retry delays: a replaced connection is never retried
  assert.equal(await stateOf(h), 'replaced')
  assert.deepEqual(await stats(h), { connections: 1, replaced: 1, sent: 0, received: 0, waiting: 0 })

  const sent = await b.transport.send('d1', FRIEND, { kind: 'text', text: 'from B' })
  assert.deepEqual(
    h.sim.network.inbox(FRIEND).map(e => [e.id, (e as { text?: string }).text]),
    [[sent.id, 'from B']],
  )
  const id = (await post(`${h.sim.url}/_sim/send`, { from: FRIEND, to: PHONE, type: 'text', text: 'to whoever holds it' })).body.id
  await until(() => b.events.some(e => e.type === 'message' && e.message.id === id), 'the message on B')
  assert.ok(!h.events.some(e => e.type === 'message'), 'nothing reaches the replaced gateway')
  assert.deepEqual(await stats(h), { connections: 1, replaced: 1, sent: 1, received: 1, waiting: 0 })
  await h.close()
})

shared('the replaced gateway connecting again takes the device back (the 440 fight leases prevent)', async () => {
  const h = await remoteHarness()
  await link(h)
  const b = await h.gateway()
  await b.transport.connect('d1')
  await until(async () => (await stateOf(h)) === 'replaced', 'A replaced')
  await h.transport.connect('d1')
  assert.equal(await stateOf(h), 'open')
  await until(async () => (await stateOf(b)) === 'replaced', 'B replaced')
  assert.equal((await stats(h)).replaced, 2)
  await h.close()
})

shared('the server refuses wrong credentials: the device reports logged-out and those credentials are deleted', async () => {
  const h = await remoteHarness()
  await link(h)
  const stored = (await h.storage.get<StoredSession>('session:d1'))!
  const other = memoryStorage()
  await other.set('session:d1', { ...stored, secret: 'not-the-secret' })
  const c = await h.gateway(other)
  await c.transport.connect('d1')
  assert.deepEqual(await c.transport.status('d1'), { state: 'logged-out', connected: false, reason: 'the network refused the device credentials' })
  assert.equal(await other.get('session:d1'), undefined)
  assert.equal(await stateOf(h), 'open', 'the holder keeps the device')
  assert.equal((await stats(h)).replaced, 0)
  await h.close()
})

shared('logout deletes the credentials and unlinks the device on the server: a copy of them no longer connects', async () => {
  const h = await remoteHarness()
  await link(h)
  const copy = memoryStorage()
  await copy.set('session:d1', await h.storage.get('session:d1'))
  await h.transport.logout('d1')
  assert.equal(await h.storage.get('session:d1'), undefined)
  assert.equal((await stats(h)).connections, 0)
  const c = await h.gateway(copy)
  await c.transport.connect('d1')
  assert.equal(await stateOf(c), 'logged-out')
  await h.close()
})

shared('logout through one gateway closes the connection another gateway holds as logged-out', async () => {
  const h = await remoteHarness()
  await link(h)
  const b = await h.gateway()
  await b.transport.connect('d1')
  await until(async () => (await stateOf(h)) === 'replaced', 'A replaced')
  await h.transport.logout('d1')
  await until(async () => (await stateOf(b)) === 'logged-out', 'B logged out')
  assert.equal((await stats(h)).connections, 0)
  await h.close()
})

shared('messages sent while no gateway holds the device reach the next one that connects, after its open status', async () => {
  const h = await remoteHarness()
  await link(h)
  await h.transport.disconnect('d1')
  assert.equal((await stats(h)).connections, 0)
  const id = await h.deliver('d1', { from: FRIEND, content: { kind: 'text', text: 'while away' } })
  const b = await h.gateway()
  await b.transport.connect('d1')
  await until(() => b.events.some(e => e.type === 'message' && e.message.id === id), 'the queued message')
  assert.deepEqual(
    b.events.map(e => e.type),
    ['status', 'message'],
  )
  await h.close()
})

shared('a lost stream shows connecting and reconnects by itself, without counting as replaced', async () => {
  const h = await remoteHarness()
  await link(h)
  h.sim.server.closeAllConnections()
  await until(() => states(h.events).includes('connecting'), 'connecting')
  await until(async () => (await stateOf(h)) === 'open', 'open again')
  assert.deepEqual(states(h.events), ['linking', 'open', 'connecting', 'open'])
  assert.deepEqual(await stats(h), { connections: 1, replaced: 0, sent: 0, received: 0, waiting: 0 })
  const id = await h.deliver('d1', { from: FRIEND, content: { kind: 'text', text: 'after the blip' } })
  await until(() => h.events.some(e => e.type === 'message' && e.message.id === id), 'a message after reconnecting')
  await h.close()
})

shared('a gateway started before the simulator server connects once the server is up, which learns the device from its credentials', async () => {
  const port = await freePort()
  const storage = memoryStorage()
  await storage.set('session:d1', { phone: PHONE, linkedAt: Date.now(), secret: 's'.repeat(32) } satisfies StoredSession)
  const events: TransportEvent[] = []
  const transport = memoryTransport({ simUrl: `http://127.0.0.1:${port}` })
  await transport.start({ storage, logger: silentLogger, emit: async event => void events.push(event) })
  await transport.connect('d1')
  assert.equal((await transport.status('d1')).state, 'connecting')
  const sim = await simulatorServer({ port, host: '127.0.0.1' })
  await until(async () => (await transport.status('d1')).state === 'open', 'open once the server is up')
  assert.deepEqual(states(events), ['connecting', 'open'])
  assert.equal(sim.network.linkedPhone('d1'), PHONE)
  await transport.stop()
  await sim.close()
})

shared('a URL that is no simulator server makes link throw a TransportError and connect keep trying', async () => {
  const other = createServer((_, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('not here'))
  await new Promise<void>(resolve => other.listen(0, '127.0.0.1', resolve))
  const storage = memoryStorage()
  await storage.set('session:d1', { phone: PHONE, linkedAt: Date.now(), secret: 's'.repeat(32) } satisfies StoredSession)
  const transport = memoryTransport({ simUrl: `http://127.0.0.1:${(other.address() as AddressInfo).port}` })
  await transport.start({ storage, logger: silentLogger, emit: async () => {} })
  await assert.rejects(transport.link('d2', {}), (err: unknown) => err instanceof TransportError && err.code === 'failed' && /404/.test(err.message))
  await transport.connect('d1')
  assert.equal((await transport.status('d1')).state, 'connecting')
  await transport.stop()
  await new Promise(resolve => other.close(resolve))
})

shared('media bytes, group calls and read receipts cross the wire', async () => {
  const h = await remoteHarness()
  await link(h)
  const file = { data: Buffer.from('%PDF-1.4 remote'), mimetype: 'application/pdf', fileName: 'a.pdf' }
  await h.transport.send('d1', FRIEND, { kind: 'media', media: 'document', file, caption: 'doc' })
  assert.deepEqual(
    h.sim.network.inbox(FRIEND).map(e => ({ ...e, id: undefined, timestamp: undefined })),
    [
      {
        id: undefined,
        from: PHONE,
        type: 'document',
        caption: 'doc',
        fileName: 'a.pdf',
        mimetype: 'application/pdf',
        bytes: file.data.length,
        timestamp: undefined,
      },
    ],
  )
  const group = await h.transport.groupCreate('d1', 'Team', [FRIEND])
  assert.equal((await h.transport.groupInfo('d1', { id: group.id }))?.subject, 'Team')
  assert.equal(await h.transport.groupJoin('d1', 'NoSuchInvite123'), undefined)
  const id = await h.deliver('d1', { from: FRIEND, content: { kind: 'text', text: 'read me' } })
  await h.transport.markRead('d1', { chat: FRIEND, id })
  assert.equal(h.sim.network.inbox(FRIEND).at(-1)?.type, 'read')
  await h.close()
})

shared('the simulator server scans by code or QR; by appkey it answers 400 naming both, and unlinks by device id', async () => {
  const h = await remoteHarness()
  const byAppkey = await post(`${h.sim.url}/_sim/scan`, { authkey: 'k', appkey: 'loja', phone: PHONE })
  assert.equal(byAppkey.status, 400)
  assert.match(byAppkey.body.message, /\{code, phone\}.*\{qr, phone\}/)
  await h.transport.link('d1', { phone: PHONE, code: 'ABCD1234' })
  assert.equal((await post(`${h.sim.url}/_sim/scan`, { code: 'ABCD1234', phone: PHONE })).status, 200)
  assert.equal(await stateOf(h), 'open')
  assert.equal((await post(`${h.sim.url}/_sim/unlink`, { appkey: 'loja' })).status, 400)
  assert.equal((await post(`${h.sim.url}/_sim/unlink`, { deviceId: 'd1' })).status, 200)
  await until(async () => (await stateOf(h)) === 'logged-out', 'logged out')
  assert.equal(await h.storage.get('session:d1'), undefined)
  await h.close()
})

shared.run()
