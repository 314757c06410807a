import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { DeviceLeases } from '../../../src/domain/cluster/device-leases.ts'
import { sessionRouting } from '../../../src/domain/cluster/session-routing.ts'
import type { Device, Devices } from '../../../src/domain/devices.ts'
import { GatewayError } from '../../../src/errors.ts'
import type { Instances } from '../../../src/domain/instances.ts'
import { silentLogger } from '../../../src/logger.ts'
import type { Transport } from '../../../src/ports/transport.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { fakeRegistry } from '../../helpers/fake-registry.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'

/**
 * A session is opened only by an instance that holds the device's lease at the epoch it took it:
 * a take that waits for an earlier close of the same session, and loses the lease meanwhile (a
 * fence), opens nothing once that close ends (it opened the session briefly, then closed it).
 */
const test = suite('device leases: no session opened for a lease lost while waiting for a close')

/** Device leases of a clustered instance over a memory store, with that registry and transport. */
function clusteredLeases(registry: ReturnType<typeof fakeRegistry>, transport: ReturnType<typeof slowClosingTransport>): DeviceLeases {
  return new DeviceLeases(
    memoryStorage(),
    new KeyedLock(),
    registry as unknown as Instances,
    transport as unknown as Transport,
    { clustered: true },
    silentLogger,
  )
}

/** A transport whose disconnects wait until released, counting connects. */
function slowClosingTransport() {
  const releases: (() => void)[] = []
  const transport = {
    connects: 0,
    async connect() {
      transport.connects++
    },
    disconnect: () => new Promise<void>(resolve => releases.push(resolve)),
    releaseCloses: () => releases.splice(0).forEach(resolve => resolve()),
  }
  return transport
}

test('a fence while a re-take waits for the earlier close: the session is not opened again', async () => {
  const registry = fakeRegistry()
  const transport = slowClosingTransport()
  const leases = clusteredLeases(registry, transport)
  assert.ok(await leases.open('d1'), 'taken and opened')
  assert.is(transport.connects, 1)

  registry.fence() // a late heartbeat: every session closes (slowly), the lease still names this instance
  assert.not.ok(leases.holds('d1'))
  const retake = leases.open('d1') // standing again and taken again: waits for that close
  await new Promise(resolve => setImmediate(resolve))
  assert.ok(leases.holds('d1'), 'the lease is taken again at a new epoch')
  registry.fence() // ...and lost again before the close ends
  transport.releaseCloses()
  await new Promise(resolve => setImmediate(resolve))
  transport.releaseCloses()
  assert.is(await retake, false)
  assert.is(transport.connects, 1, 'no session opened for a lease no longer held')
})

test('a re-take that keeps its lease opens the session once the earlier close has ended', async () => {
  const registry = fakeRegistry()
  const transport = slowClosingTransport()
  const leases = clusteredLeases(registry, transport)
  assert.ok(await leases.open('d1'))
  registry.fence()
  const retake = leases.open('d1')
  await new Promise(resolve => setImmediate(resolve))
  assert.is(transport.connects, 1, 'not before the close ends')
  transport.releaseCloses()
  assert.is(await retake, true)
  assert.is(transport.connects, 2)
})

test('a send that ran while its device was let go and taken again answers 503 for a retry, not 409', async () => {
  const registry = fakeRegistry()
  const transport = slowClosingTransport()
  const leases = clusteredLeases(registry, transport)
  const routing = sessionRouting({} as Devices, leases, true)
  const device = { id: 'd1', linked: true } as Device
  const closed = () => new GatewayError('not-connected')
  assert.ok(await leases.open('d1'))

  const steady = routing.letGoGuard(device)
  assert.is((steady(closed()) as GatewayError).code, 'not-connected', 'held all along: the device is really closed (409)')

  const acrossRetake = routing.letGoGuard(device) // the send starts...
  registry.fence() // ...the store pauses: the session is closed under it...
  const retake = leases.open('d1') // ...and the store is back: the device is taken again before the send fails
  transport.releaseCloses()
  assert.ok(await retake)
  assert.ok(leases.holds('d1'))
  const answer = acrossRetake(closed()) as GatewayError
  assert.is(answer.code, 'holder-unavailable', 'the session it found was closed by the let-go: 503, the client retries')
  assert.is((acrossRetake(new GatewayError('device-not-found')) as GatewayError).code, 'device-not-found', 'other errors pass as they are')

  const whileLetGo = routing.letGoGuard(device)
  registry.fence()
  assert.is((whileLetGo(closed()) as GatewayError).code, 'holder-unavailable', 'let go and not taken again: 503')
})

test.run()
