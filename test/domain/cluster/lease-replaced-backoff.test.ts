import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { DeviceLeases } from '../../../src/domain/cluster/device-leases.ts'
import type { Instances } from '../../../src/domain/instances.ts'
import { silentLogger } from '../../../src/logger.ts'
import type { Transport } from '../../../src/ports/transport.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { fakeRegistry } from '../../helpers/fake-registry.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'

/**
 * In cluster mode a held device whose session was replaced (440) is opened again by its holder: the
 * other connection was an instance that lost the lease, and lets go. When a client outside the cluster
 * uses the same credentials, every reopen replaces it and it replaces us back: the holder reopens with
 * back-off in heartbeats (1, 2, 4, ... up to 64 between tries), not at every heartbeat.
 */
const test = suite('device leases: a replaced session is reopened with back-off')

test('a session replaced again at every heartbeat is not reopened at every heartbeat', async () => {
  const transport = {
    state: 'closed',
    connects: 0,
    status: async () => ({ state: transport.state, connected: transport.state === 'open' }),
    async connect() {
      transport.connects++
      transport.state = 'open'
    },
    async disconnect() {
      transport.state = 'closed'
    },
  }
  const leases = new DeviceLeases(
    memoryStorage(),
    new KeyedLock(),
    fakeRegistry() as unknown as Instances,
    transport as unknown as Transport,
    { clustered: true },
    silentLogger,
  )
  assert.ok(await leases.open('d1'))
  const reopenedAt: number[] = []
  for (let beat = 1; beat <= 16; beat++) {
    transport.state = 'replaced' // the outside client took the session back since the last heartbeat
    const before = transport.connects
    await leases.reconcile(async () => true)
    if (transport.connects > before) reopenedAt.push(beat)
  }
  assert.equal(reopenedAt, [1, 3, 7, 15], 'reopened at the first heartbeat, then after 1, 3, 7 skipped ones')
  assert.ok(leases.holds('d1'), 'the lease is kept')
})

test.run()
