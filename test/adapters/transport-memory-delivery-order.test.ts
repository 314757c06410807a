import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { silentLogger } from '../../src/logger.ts'
import type { TransportEvent } from '../../src/ports/transport.ts'
import { MemoryNetwork, memoryTransport, simulatorServer } from '../../adapters/transport-memory/index.ts'
import type { MemoryTransportOptions } from '../../adapters/transport-memory/index.ts'
import { post } from '../helpers/http.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'

const PHONE = '5511999990001'
const FRIEND = '5511988880002'

const test = suite('transport-memory: delivery order')

/** A transport whose announcement of the open session waits for `release()` while `holding`. */
async function gatedTransport(options: MemoryTransportOptions) {
  const texts: string[] = []
  const gate = { holding: false, entered: false, release: () => {} }
  const opened = new Promise<void>(resolve => (gate.release = resolve))
  const emit = async (event: TransportEvent) => {
    if (event.type === 'message' && event.message.content.kind === 'text') texts.push(event.message.content.text)
    if (gate.holding && event.type === 'status' && event.status.state === 'open') {
      gate.entered = true
      await opened
    }
  }
  const transport = memoryTransport(options)
  await transport.start({ storage: memoryStorage(), logger: silentLogger, emit })
  return { transport, texts, gate }
}

test('a message sent while the device reconnects arrives after the ones queued while it was away', async () => {
  const network = new MemoryNetwork()
  const { transport, texts, gate } = await gatedTransport({ network })
  const challenge = await transport.link('d1', {})
  assert.ok(challenge.kind === 'qr')
  await network.scan({ qr: challenge.qr }, PHONE)
  await transport.disconnect('d1')
  await network.sendFromPhone(FRIEND, PHONE, { type: 'text', text: 'first, while away' })

  gate.holding = true
  const connecting = transport.connect('d1')
  while (!gate.entered) await new Promise(resolve => setImmediate(resolve))
  // The device is back on the network, but has not announced its open session yet.
  const second = network.sendFromPhone(FRIEND, PHONE, { type: 'text', text: 'second, on reconnecting' })
  gate.release()
  await Promise.all([connecting, second])
  await network.settled()

  assert.deepEqual(texts, ['first, while away', 'second, on reconnecting'])
  await transport.stop()
})

test('on a simulator server too: what waited for the device comes before what arrived as it reconnected', async () => {
  const sim = await simulatorServer({ port: 0, host: '127.0.0.1' })
  const { transport, texts, gate } = await gatedTransport({ simUrl: sim.url })
  const send = async (text: string) => assert.equal((await post(`${sim.url}/_sim/send`, { from: FRIEND, to: PHONE, type: 'text', text })).status, 200)
  const challenge = await transport.link('d1', {})
  assert.ok(challenge.kind === 'qr')
  assert.equal((await post(`${sim.url}/_sim/scan`, { qr: challenge.qr, phone: PHONE })).status, 200)
  await transport.disconnect('d1')
  await send('first, while away')

  gate.holding = true
  const connecting = transport.connect('d1')
  while (!gate.entered) await new Promise(resolve => setTimeout(resolve, 5))
  const second = send('second, on reconnecting')
  gate.release()
  await Promise.all([connecting, second])
  while (texts.length < 2) await new Promise(resolve => setTimeout(resolve, 5))

  assert.deepEqual(texts, ['first, while away', 'second, on reconnecting'])
  await transport.stop()
  await sim.close()
})

test.run()
