import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { silentLogger } from '../../src/logger.ts'
import type { TransportEvent } from '../../src/ports/transport.ts'
import { memoryTransport, simulatorServer } from '../../adapters/transport-memory/index.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { post } from '../helpers/http.ts'

const PHONE = '5511999990001'
const FRIEND = '5511988880002'
const tick = () => new Promise(resolve => setTimeout(resolve, 5))

const test = suite('transport-memory on a simulator server: redelivery')

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

test.run()
