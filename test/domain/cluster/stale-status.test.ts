import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import { internalsOf } from '../../../src/internals.ts'
import { inProcessCluster, linkedDeviceInCluster, pausableStorage } from '../../helpers/cluster-in-process.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { post } from '../../helpers/http.ts'
import { tempDir } from '../../helpers/standalone.ts'

/**
 * A holder cut from the store (a partition) closes its session at its fence; the status event of
 * that close cannot be written and waits in its buffer of incoming events. Another instance takes
 * the device over and opens it. When the first one reaches the store again, its old "closed" must
 * not overwrite the new holder's "open": the device's stored status is what every other instance
 * shows (gateway.findDevices, the QR share page off the holder).
 */
test('a status the old holder recorded late, after a partition, does not mark the new holder’s open device closed', async () => {
  const network = new MemoryNetwork()
  const cuts: ReturnType<typeof pausableStorage>[] = []
  const members = await inProcessCluster(2, (_index, storage) => {
    const cut = pausableStorage(storage)
    cuts.push(cut)
    return {
      storage: cut.storage,
      transport: memoryTransport({ network }),
      instances: { heartbeatMs: 200, ttlMs: 3_000 }, // a fence at 2 s: a first test's slow start (JIT, QR) stays under it
      storageTimeoutMs: 300,
      cacheTtlMs: 0,
      spillDir: tempDir('zapgate-stale-status-'),
    }
  })
  const cut = (member: (typeof members)[number]) => cuts[members.indexOf(member)]!
  try {
    const { authkey, deviceId, holder, other } = await linkedDeviceInCluster(members, network, 'stale-status@example.com')
    const incoming = internalsOf(holder.gateway).incoming
    cut(holder).pause()
    // The other instance judges the holder gone, takes the device and opens its session.
    await waitFor(async () => other.holds(deviceId) && (await other.gateway.findDevices(authkey, 'loja'))?.[0]?.connected === true, 10_000, 'the takeover')
    assert.ok(incoming.size > 0, 'the old holder keeps its session-closed status to record later')
    cut(holder).resume()
    await waitFor(() => incoming.size === 0, 10_000, 'the old holder to record what it kept')
    assert.ok(other.holds(deviceId), 'the device stays with the instance that took it')
    const found = await other.gateway.findDevices(authkey, 'loja')
    assert.is(found?.[0]?.connected, true, 'the stored status is the new holder’s: connected')
    const status = (await post(`${other.url}/api/developer`, { authkey, message: 'loja', checkDispositivo: 'true' })).body.dispositivo
    assert.is(status.conectado, true)
  } finally {
    for (const c of cuts) c.resume()
    for (const member of members) await member.stop().catch(() => {})
  }
})

test.run()
