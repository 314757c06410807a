import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import type { Storage } from '../../../src/ports/storage.ts'
import { inProcessCluster, linkedDeviceInCluster } from '../../helpers/cluster-in-process.ts'
import { post } from '../../helpers/http.ts'
import { waitFor } from '../../helpers/gateway.ts'

const FRIEND = '5511988887777'

/** `storage` with every read of a device lease counted in `reads`. */
function countingLeaseReads(storage: Storage, reads: { count: number }): Storage {
  return new Proxy(storage, {
    get(target, name, receiver) {
      if (name !== 'get') {
        const value = Reflect.get(target, name, receiver)
        return typeof value === 'function' ? value.bind(target) : value
      }
      return (key: string) => {
        if (key.includes('device-lease')) reads.count++
        return target.get(key)
      }
    },
  })
}

test('the forwarding instance reads a device lease once, not per forward; once the holder is gone, the next request is sent once all the same', async () => {
  const network = new MemoryNetwork()
  const reads = [{ count: 0 }, { count: 0 }]
  const members = await inProcessCluster(2, (index, storage) => ({
    transport: memoryTransport({ network }),
    storage: countingLeaseReads(storage, reads[index]!),
  }))
  try {
    const { authkey, deviceId, holder, other } = await linkedDeviceInCluster(members, network, 'known@example.com')
    const otherReads = reads[members.indexOf(other)]!
    const forwards: unknown[] = []
    other.gateway.events.on('forward', event => forwards.push(event))
    const send = (text: string) => post(`${other.url}/api/create-message`, { authkey, appkey: 'loja', to: FRIEND, message: text })

    const first = await send('um')
    assert.is(first.status, 200, first.text)
    assert.is(first.headers.get('x-zapgate-holder'), holder.url, 'the holder hint is relayed')
    assert.is(first.headers.get('x-zapgate-not-holder'), null, 'the instances own marker is never relayed')
    const afterFirst = otherReads.count
    assert.ok(afterFirst >= 1, 'the first forward read the lease')
    for (const text of ['dois', 'três', 'quatro']) assert.is((await send(text)).status, 200)
    assert.is(otherReads.count, afterFirst, 'no lease read for the later forwards')
    assert.is(forwards.length, 4)

    // The holder leaves (its leases let go): the remembered holder is stale, and the next request is
    // worked where the store says, here (the device taken over), and sent once.
    await holder.stop()
    await waitFor(async () => (await send('cinco')).status === 200, 10_000)
    assert.ok(other.holds(deviceId), 'taken over by the instance called')
    const texts = network.inbox(FRIEND).map(entry => ('text' in entry ? entry.text : entry.type))
    assert.equal(texts, ['um', 'dois', 'três', 'quatro', 'cinco'])
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test.run()
