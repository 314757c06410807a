import { once } from 'node:events'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { memoryTransport } from '../../../adapters/transport-memory/index.ts'
import { DeviceLeases } from '../../../src/domain/cluster/device-leases.ts'
import type { Instances } from '../../../src/domain/instances.ts'
import { createGateway, type Gateway } from '../../../src/index.ts'
import { internalsOf } from '../../../src/internals.ts'
import { silentLogger } from '../../../src/logger.ts'
import type { Storage } from '../../../src/ports/storage.ts'
import type { Transport, TransportContext } from '../../../src/ports/transport.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { startGateway } from '../../helpers/gateway.ts'
import { fakeRegistry } from '../../helpers/fake-registry.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'

/**
 * The guards of a device lease (docs/scaling.md, "Claims and clocks"): a session is opened here only
 * while this instance holds the lease at the epoch it took it and stands. A lease another instance
 * took is let go of (a verify, a heartbeat's reconciliation) and its session never reopened here; a
 * take is refused while the owner's record still beats, or when a fence cut it; a paused instance
 * holds nothing once its fence time has passed, before any timer noticed; and a gateway outside
 * cluster mode does not fight the client that replaced its session.
 */
const test = suite('device leases: the guards of a take and of a held lease')

/** A transport of one session state for every device, counting connects and disconnects. */
function sessions(state = 'closed') {
  const transport = {
    state,
    connects: 0,
    disconnects: 0,
    status: async () => ({ state: transport.state, connected: transport.state === 'open' }),
    async connect() {
      transport.connects++
      transport.state = 'open'
    },
    async disconnect() {
      transport.disconnects++
      transport.state = 'closed'
    },
  }
  return transport
}

function leasesOf(storage: Storage, instances: ReturnType<typeof fakeRegistry>, transport: ReturnType<typeof sessions>): DeviceLeases {
  return new DeviceLeases(storage, new KeyedLock(), instances as unknown as Instances, transport as unknown as Transport, { clustered: true }, silentLogger)
}

/** Device leases of instance-a on a memory store, instance-b alive beside it. */
function withLiveInstanceB() {
  const store = memoryStorage()
  const instances = fakeRegistry()
  instances.alive.add('instance-b')
  const transport = sessions()
  return { store, instances, transport, leases: leasesOf(store, instances, transport) }
}

test('a heartbeat finding a closed session whose lease another live instance took since lets the device go and opens nothing here', async () => {
  const { store, transport, leases } = withLiveInstanceB()
  assert.ok(await leases.open('d1'))
  transport.state = 'closed' // closed under it (a fence, a network drop)...
  await store.set('device-lease:d1', { owner: 'instance-b', epoch: 2 }) // ...and taken over meanwhile

  await leases.reconcile(async () => true) // what each heartbeat runs
  assert.is(transport.connects, 1, 'no session opened for a lease another instance holds')
  assert.not.ok(leases.holds('d1'), 'let go')
  assert.equal(await store.get('device-lease:d1'), { owner: 'instance-b', epoch: 2 }, "the new holder's lease stands")
})

test("verify lets go of a lease another instance took at a higher epoch and closes its session; the others' stay", async () => {
  const { store, transport, leases } = withLiveInstanceB()
  assert.ok(await leases.open('d1'))
  assert.ok(await leases.open('d2'))
  assert.is(leases.epochOf('d1'), 1)
  await store.set('device-lease:d1', { owner: 'instance-b', epoch: 2 })

  await leases.verify()
  assert.not.ok(leases.holds('d1'), 'taken over: let go')
  assert.is(transport.disconnects, 1, 'its session closed here')
  assert.ok(leases.holds('d2'), 'a lease still its own is kept')
  assert.equal(leases.devices, ['d2'])
})

test('a take of a lease whose owner a stale view counts gone, but whose record still beats, is refused', async () => {
  const store = memoryStorage()
  const instances = fakeRegistry() // instance-b is not alive by the last registry read...
  instances.beats.add('instance-b') // ...but its record, read now, has moved on
  const transport = sessions()
  const leases = leasesOf(store, instances, transport)
  await store.set('device-lease:d1', { owner: 'instance-b', epoch: 3 })

  assert.is(await leases.acquire('d1'), false)
  assert.equal(instances.asked, ['instance-b'], 'its record was read before the take')
  assert.not.ok(leases.holds('d1'))
  assert.equal(await store.get('device-lease:d1'), { owner: 'instance-b', epoch: 3 }, 'the lease stays its owner')
  assert.is(await leases.open('d1'), false)
  assert.is(transport.connects, 0, 'no session opened')

  instances.beats.clear() // its record stood still: gone
  assert.ok(await leases.acquire('d1'), 'taken once confirmed gone')
})

test('a take a fence interrupts during its compare-and-set is not kept, even when the instance stands again at once', async () => {
  const store = memoryStorage()
  const instances = fakeRegistry()
  let fenceDuringTake = false
  const storage: Storage = {
    ...store,
    async compareAndSet(key, expected, next, ttlMs) {
      // A late heartbeat while the write was on its way, then one that reached the store: standing again.
      if (fenceDuringTake && key.startsWith('device-lease:')) instances.fence()
      return store.compareAndSet(key, expected, next, ttlMs)
    },
  }
  const transport = sessions()
  const leases = leasesOf(storage, instances, transport)
  fenceDuringTake = true

  assert.is(await leases.acquire('d1'), false)
  assert.not.ok(leases.holds('d1'), 'the instance holds nothing the fence cut')
  assert.is(leases.count, 0)
  assert.is(await leases.namesMe('d1'), true, 'the lease names it: it takes the device again at its next scan')
  assert.is(await leases.open('d2'), false)
  assert.is(transport.connects, 0, 'no session opened for a take a fence cut')

  fenceDuringTake = false
  assert.ok(await leases.open('d1'), 'taken again without a fence')
  assert.is(transport.connects, 1)
})

/** Block the event loop for `ms`, as a paused process: no timer, no heartbeat runs meanwhile. */
function pauseProcess(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until) {
    // a stopped process: nothing else runs
  }
}

let gateway: Gateway | undefined
test.after.each(async () => {
  await gateway?.close()
  gateway = undefined
})

test('an instance paused past its fence holds nothing when it wakes, before any timer ran', async () => {
  // Fenced two thirds of the ttl (1 s) after the last heartbeat was sent (the ttl of transport-writes-fence.test.ts).
  gateway = await createGateway({
    storage: memoryStorage(),
    transport: memoryTransport(),
    instances: { heartbeatMs: 100, ttlMs: 1_500 },
    cluster: { secret: 'a cluster secret of enough length', advertiseUrl: 'http://127.0.0.1:2' },
  })
  const { leases, instances } = internalsOf(gateway)
  assert.ok(await leases.acquire('d1'))
  assert.ok(leases.holds('d1'))

  pauseProcess(1_100) // woken: the fence's timer has not run, the lease is still in its books
  assert.not.ok(leases.holds('d1'), 'not held while fenced: a request for it is not worked here')
  assert.is(leases.epochOf('d1'), undefined)
  assert.not.ok(await leases.acquire('d1'), 'nothing is taken while fenced')
  await once(instances.events, 'rejoin')
})

test('outside cluster mode a session another client replaced is not opened again at the following heartbeats', async () => {
  const transport = memoryTransport()
  let context: TransportContext | undefined
  const start = transport.start.bind(transport)
  transport.start = async given => ((context = given), start(given))
  const t = await startGateway({ transport, network: transport.network!, instances: { heartbeatMs: 100, ttlMs: 5_000 } })
  try {
    const { authkey } = await t.register()
    const device = await t.linkedDevice(authkey, 'loja', '5511911116666')
    assert.ok(internalsOf(t.gateway).leases.holds(device.id))
    const other = memoryTransport({ network: t.network }) // another client with the device's credentials
    await other.start({ storage: context!.storage, logger: silentLogger, emit: async () => {} })
    await other.connect(device.id)
    await t.network.settled()
    assert.is((await transport.status(device.id)).state, 'replaced')

    const { events } = internalsOf(t.gateway).instances
    for (let beat = 0; beat < 3; beat++) await once(events, 'beat') // each heartbeat reconciles the sessions held
    assert.is((await transport.status(device.id)).state, 'replaced', 'not opened again')
    assert.is((await other.status(device.id)).state, 'open', 'the other client keeps the session')
    assert.is(t.network.stats().replaced, 1)
  } finally {
    await t.stop()
  }
})

test.run()
