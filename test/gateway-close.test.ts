import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createGateway } from '../src/index.ts'
import type { Transport } from '../src/ports/transport.ts'
import { MemoryNetwork, memoryTransport } from '../adapters/transport-memory/index.ts'

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

test.run()
