import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { MemoryNetwork, memoryTransport } from '../../adapters/transport-memory/index.ts'
import type { Transport } from '../../src/ports/transport.ts'
import { DEVICE_PHONE, FRIEND, assertError, assertOk, inbox, sendingGateway } from '../helpers/messaging.ts'

const test = suite('a send reads the session status the transport knows at once (Transport.statusNow)')

/** The memory transport, its `status` counted and, once `hang` is set, never answering; `statusNow` passed through unless `withoutNow`. */
function watchedTransport(network: MemoryNetwork, withoutNow = false) {
  const inner = memoryTransport({ network })
  const watch = { statusCalls: 0, hang: false }
  const status: Transport['status'] = deviceId => {
    watch.statusCalls++
    return watch.hang ? new Promise(() => {}) : inner.status(deviceId)
  }
  const transport = new Proxy(inner, {
    get(target, name) {
      if (name === 'status') return status
      if (name === 'statusNow' && withoutNow) return undefined
      const value = Reflect.get(target, name)
      return typeof value === 'function' ? value.bind(target) : value
    },
  }) as Transport
  return { transport, watch }
}

test('a send to an open session does not ask the transport for its status: a status call that hangs holds nothing up', async () => {
  const network = new MemoryNetwork()
  const { transport, watch } = watchedTransport(network)
  const g = await sendingGateway({ network, transport, sendTimeoutMs: 60_000 })
  try {
    watch.hang = true
    watch.statusCalls = 0
    const sent = assertOk(await g.send({ to: FRIEND, message: 'sem esperar' }))
    assert.deepEqual(inbox(g.network, FRIEND), [{ id: sent.id, from: DEVICE_PHONE, type: 'text', text: 'sem esperar' }])
    assert.equal(watch.statusCalls, 0)
  } finally {
    watch.hang = false
    await g.stop()
  }
})

test('a session the network closed is refused 409 Dispositivo desconectado, and nothing is sent', async () => {
  const network = new MemoryNetwork()
  const { transport } = watchedTransport(network)
  const g = await sendingGateway({ network, transport })
  try {
    assert.ok(await network.unlink(g.deviceId))
    await network.settled()
    assertError(await g.send({ to: FRIEND, message: 'fechado' }), 409, 'Dispositivo desconectado.')
    assert.deepEqual(inbox(g.network, FRIEND), [])
  } finally {
    await g.stop()
  }
})

test('a transport without statusNow is asked its status once per send', async () => {
  const network = new MemoryNetwork()
  const { transport, watch } = watchedTransport(network, true)
  const g = await sendingGateway({ network, transport })
  try {
    watch.statusCalls = 0
    assertOk(await g.send({ to: FRIEND, message: 'perguntando' }))
    assert.equal(watch.statusCalls, 1)
  } finally {
    await g.stop()
  }
})

test.run()
