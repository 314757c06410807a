import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { silentLogger } from '../../src/logger.ts'
import type { TransportEvent } from '../../src/ports/transport.ts'
import { MemoryNetwork, memoryTransport } from '../../adapters/transport-memory/index.ts'
import type { MemoryTransport } from '../../adapters/transport-memory/index.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { post, request } from '../helpers/http.ts'
import { remoteHarness } from './remote-harness.ts'

const PHONE = '5511999990001'
const NEW_PHONE = '5511988880002'
const FRIEND = '5511977770003'
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))
async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await condition()); await sleep(5)) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`)
  }
}
const statuses = (events: TransportEvent[]) => events.flatMap(e => (e.type === 'status' ? [e.status] : []))

const test = suite('transport-memory: a device linked again to another phone')

test('in process: the transport that held the device hears it was replaced, instead of showing it open for good', async () => {
  const network = new MemoryNetwork()
  const gateway = async (events: TransportEvent[]): Promise<MemoryTransport> => {
    const transport = memoryTransport({ network })
    await transport.start({ storage: memoryStorage(), logger: silentLogger, emit: async event => void events.push(event) })
    return transport
  }
  const aEvents: TransportEvent[] = []
  const a = await gateway(aEvents)
  const b = await gateway([])
  const first = await a.link('d1', {})
  assert.ok(first.kind === 'qr')
  await network.scan(first.qr, PHONE)
  const second = await b.link('d1', {})
  assert.ok(second.kind === 'qr')
  await network.scan(second.qr, NEW_PHONE)

  assert.deepEqual(await b.status('d1'), { state: 'open', connected: true, phone: NEW_PHONE })
  await until(async () => (await a.status('d1')).state === 'replaced', 'A to hear it was replaced')
  assert.equal((await a.status('d1')).connected, false)
  assert.deepEqual(statuses(aEvents).at(-1), { state: 'replaced', connected: false, phone: PHONE, reason: 'the device was linked to another phone' })
  assert.deepEqual(network.stats(), { connections: 1, waiting: 0, replaced: 1, sent: 0, received: 0 })
  await a.stop()
  await b.stop()
})

test('on a simulator server: the gateway that held the device hears it was replaced, and messages reach the new holder', async () => {
  const h = await remoteHarness()
  const first = await h.transport.link('d1', {})
  await h.completeLink('d1', first, PHONE)
  const b = await h.gateway(memoryStorage())
  const second = await b.transport.link('d1', {})
  assert.ok(second.kind === 'qr')
  assert.equal((await post(`${h.sim.url}/_sim/scan`, { qr: second.qr, phone: NEW_PHONE })).status, 200)

  await until(async () => (await h.transport.status('d1')).state === 'replaced', 'A to hear it was replaced')
  assert.equal((await h.transport.status('d1')).connected, false)
  assert.deepEqual((await request(`${h.sim.url}/_sim/stats`)).body, { connections: 1, waiting: 0, replaced: 1, sent: 0, received: 0 })
  const id = (await post(`${h.sim.url}/_sim/send`, { from: FRIEND, to: NEW_PHONE, type: 'text', text: 'hi' })).body.id
  await until(async () => b.events.some(e => e.type === 'message' && e.message.id === id), 'the message on B')
  await h.close()
})

test.run()
