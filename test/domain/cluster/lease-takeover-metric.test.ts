import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import { inProcessCluster, linkedDeviceInCluster } from '../../helpers/cluster-in-process.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { scrape } from '../../helpers/metrics.ts'

/** `zapgate_lease_takeovers_total` counts the leases an instance took over from another, "gone, or having handed it back" (docs/api.md). */
const test = suite('cluster metrics: a lease taken after a graceful hand-back')

test('is a takeover: the lease event names the instance that handed it back, and the counter counts it', async () => {
  const network = new MemoryNetwork()
  const members = await inProcessCluster(2, () => ({
    transport: memoryTransport({ network }),
    instances: { heartbeatMs: 300, ttlMs: 3_000 },
    metrics: true,
  }))
  try {
    const { deviceId, holder, other } = await linkedDeviceInCluster(members, network, 'ana@example.com')
    const leases: { deviceId: string; epoch: number; from?: string }[] = []
    other.gateway.events.on('lease', lease => void leases.push(lease))
    await holder.stop() // a graceful stop: its devices handed back
    await waitFor(() => other.holds(deviceId), 10_000, 'the other instance to hold the device')
    assert.equal(leases, [{ deviceId, epoch: leases[0]?.epoch, from: holder.id }])
    assert.is((await scrape(other.url)).value('zapgate_lease_takeovers_total'), 1)
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test.run()
