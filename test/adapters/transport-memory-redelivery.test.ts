import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { silentLogger } from '../../src/logger.ts'
import type { TransportEvent } from '../../src/ports/transport.ts'
import { MemoryNetwork, memoryTransport, simulatorServer } from '../../adapters/transport-memory/index.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { post } from '../helpers/http.ts'

const PHONE = '5511999990001'
const FRIEND = '5511988880002'
const tick = () => new Promise(resolve => setTimeout(resolve, 5))

/** Wait until `done()` holds (at most `ms`), then tell whether it does. */
async function eventually(done: () => boolean, ms = 3_000): Promise<boolean> {
  for (const until = Date.now() + ms; !done() && Date.now() < until;) await tick()
  return done()
}

/** A transport on `where` whose gateway fails to take the first message it is handed (its emit throws), linked as PHONE; `texts` what it took. */
async function failingOnce(where: { network: MemoryNetwork } | { simUrl: string }) {
  const texts: string[] = []
  const states: string[] = []
  let failures = 0
  const transport = memoryTransport(where)
  await transport.start({
    storage: memoryStorage(),
    logger: silentLogger,
    emit: async (event: TransportEvent) => {
      if (event.type === 'status') states.push(event.status.state)
      if (event.type !== 'message' || event.message.content.kind !== 'text') return
      if (failures++ === 0) throw new Error('the gateway could not record it')
      texts.push(event.message.content.text)
    },
  })
  const challenge = await transport.link('d1', {})
  assert.ok(challenge.kind === 'qr')
  return { transport, texts, states, qr: challenge.qr }
}

const test = suite('transport-memory: redelivery of what the gateway did not take')

test('a message a replaced gateway never acked reaches the next gateway before the ones sent after it', async () => {
  // A long ack wait: the unacked message is still being delivered when its connection ends.
  const sim = await simulatorServer({ port: 0, host: '127.0.0.1', ackWaitMs: 60_000 })
  const storage = memoryStorage()
  let stuck = false
  let unstick = () => {}
  const held = new Promise<void>(resolve => (unstick = resolve))
  const a = memoryTransport({ simUrl: sim.url })
  await a.start({
    storage,
    logger: silentLogger,
    emit: async (event: TransportEvent) => {
      if (event.type === 'message') {
        stuck = true
        await held // gateway A takes the first message and never acks it
      }
    },
  })
  const challenge = await a.link('d1', {})
  assert.ok(challenge.kind === 'qr')
  assert.equal((await post(`${sim.url}/_sim/scan`, { qr: challenge.qr, phone: PHONE })).status, 200)

  let crossed = 0
  sim.network.onMessage(() => crossed++)
  const send = (text: string) => post(`${sim.url}/_sim/send`, { from: FRIEND, to: PHONE, type: 'text', text })
  const sends = [send('one')]
  while (!stuck) await tick()
  sends.push(send('two'), send('three'))
  while (crossed < 3) await tick()

  const texts: string[] = []
  const b = memoryTransport({ simUrl: sim.url })
  await b.start({
    storage: storage.connectAgain(),
    logger: silentLogger,
    emit: async event => {
      if (event.type === 'message' && event.message.content.kind === 'text') texts.push(event.message.content.text)
    },
  })
  await b.connect('d1') // A's connection closes as replaced, 'one' still unacked
  for (const answer of await Promise.all(sends)) assert.equal(answer.status, 200)
  while (texts.length < 3) await tick()

  assert.deepEqual(texts, ['one', 'two', 'three'])
  unstick()
  await a.stop()
  await b.stop()
  await sim.close()
})

test('in process: a message whose emit failed is not taken as delivered: it comes again, first, when the device reconnects', async () => {
  const network = new MemoryNetwork()
  const g = await failingOnce({ network })
  await network.scan(g.qr, PHONE)
  await network.sendFromPhone(FRIEND, PHONE, { type: 'text', text: 'one' }) // the gateway fails to take it
  await network.sendFromPhone(FRIEND, PHONE, { type: 'text', text: 'two' }) // live messages still flow
  assert.deepEqual(g.texts, ['two'])
  await g.transport.disconnect('d1')
  await g.transport.connect('d1')
  await network.settled()
  // Before: the failure was logged and the message counted as delivered: 'one' was lost.
  assert.deepEqual(g.texts, ['two', 'one'])
  await g.transport.stop()
})

test('on a simulator server: a message whose emit failed is not acked: it comes again when the device reconnects', async () => {
  const sim = await simulatorServer({ port: 0, host: '127.0.0.1' })
  const g = await failingOnce({ simUrl: sim.url })
  assert.equal((await post(`${sim.url}/_sim/scan`, { qr: g.qr, phone: PHONE })).status, 200)
  for (const text of ['one', 'two']) assert.equal((await post(`${sim.url}/_sim/send`, { from: FRIEND, to: PHONE, type: 'text', text })).status, 200)
  assert.deepEqual(g.texts, ['two'])
  await g.transport.disconnect('d1')
  await g.transport.connect('d1')
  // Before: the gateway acked it anyway and the server forgot it: 'one' never came again.
  assert.ok(await eventually(() => g.texts.length === 2), `received ${JSON.stringify(g.texts)}`)
  assert.deepEqual(g.texts, ['two', 'one'])
  await g.transport.stop()
  await sim.close()
})

test('on a simulator server: past unackedLimit frames a device has not acked, its stream is dropped; after the reconnect nothing is missing', async () => {
  const sim = await simulatorServer({ port: 0, host: '127.0.0.1', ackWaitMs: 20, unackedLimit: 2 })
  const texts = new Set<string>()
  const states: string[] = []
  let unstick = () => {}
  const held = new Promise<void>(resolve => (unstick = resolve))
  const transport = memoryTransport({ simUrl: sim.url })
  await transport.start({
    storage: memoryStorage(),
    logger: silentLogger,
    emit: async (event: TransportEvent) => {
      if (event.type === 'status') states.push(event.status.state)
      if (event.type !== 'message' || event.message.content.kind !== 'text') return
      await held // a gateway that takes nothing (and so acks nothing) for now
      texts.add(event.message.content.text)
    },
  })
  const challenge = await transport.link('d1', {})
  assert.ok(challenge.kind === 'qr')
  assert.equal((await post(`${sim.url}/_sim/scan`, { qr: challenge.qr, phone: PHONE })).status, 200)
  const sent = ['m1', 'm2', 'm3', 'm4', 'm5']
  for (const text of sent) assert.equal((await post(`${sim.url}/_sim/send`, { from: FRIEND, to: PHONE, type: 'text', text })).status, 200)
  // Before: the server kept every unacked frame of the stream, without limit, and the stream open.
  assert.ok(await eventually(() => sim.network.stats().connections === 0), 'the stream past the limit is dropped')
  assert.equal(sim.network.stats().waiting, sent.length, 'the unacked messages wait for the next connection, with the later ones')
  unstick()
  assert.ok(await eventually(() => sent.every(text => texts.has(text)) && states.at(-1) === 'open', 8_000), `received ${JSON.stringify([...texts])}`)
  assert.ok(states.includes('connecting'), 'the gateway saw the stream lost and reconnected')
  await transport.stop()
  await sim.close()
})

test.run()
