import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createGateway } from '../src/index.ts'
import type { Transport } from '../src/ports/transport.ts'
import { MemoryNetwork, memoryTransport } from '../adapters/transport-memory/index.ts'
import { internalsOf } from '../src/internals.ts'
import { startGateway } from './helpers/gateway.ts'
import { memoryStorage } from './helpers/memory-storage.ts'

/** gateway.close() runs every step of the shutdown, in order, even past one that fails: a transport that cannot stop must not leave the outbox unclosed or the webhook sender open. */
const test = suite('gateway.close(): every step runs past a failed one')

test('a transport whose stop() fails: the steps after it run (the webhook sender is closed), the failure is logged, and close() rejects with it', async () => {
  const transport: Transport = memoryTransport({ network: new MemoryNetwork() })
  const stop = transport.stop.bind(transport)
  transport.stop = async () => {
    await stop()
    throw new Error('the sessions would not close')
  }
  const closed: string[] = []
  const errors: string[] = []
  const logger = { debug() {}, info() {}, warn() {}, error: (_: unknown, msg?: string) => void errors.push(msg ?? '') }
  const gateway = await createGateway({
    transport,
    logger,
    webhooks: { send: async () => ({ status: 200 }), close: async () => void closed.push('webhook sender') },
  })
  await gateway.ready
  const failure = await gateway.close().then(
    () => undefined,
    (err: Error) => err,
  )
  assert.instance(failure, Error, 'close() rejects')
  assert.is(failure!.message, 'the sessions would not close', "with the failed step's error")
  assert.equal(closed, ['webhook sender'], 'the steps after the failed one ran: the webhook sender was closed')
  assert.ok(
    errors.some(msg => /shutdown: the transport failed/.test(msg)),
    `the failure is logged (${JSON.stringify(errors)})`,
  )
})

for (const failing of [false, true])
  test(`leases are handed back at close only once the sends are done: ${failing ? "the send queues failed to close, the lease stays this instance's (it runs out at its ttl)" : 'a clean close hands it back at once'}`, async () => {
    const storage = memoryStorage()
    const t = await startGateway({ storage })
    const { authkey } = await t.register()
    const device = await t.linkedDevice(authkey, 'loja', '5511900000009')
    const { messaging, instances } = internalsOf(t.gateway)
    if (failing) {
      const close = messaging.close.bind(messaging)
      messaging.close = async () => {
        await close()
        throw new Error('a send would not stop')
      }
    }
    await t.stop().catch(() => undefined)
    const lease = await storage.get<{ owner: string | null }>(`device-lease:${device.id}`)
    assert.is(lease?.owner, failing ? instances.id : null)
  })

test.run()
