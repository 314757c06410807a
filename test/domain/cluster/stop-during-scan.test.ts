import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import { internalsOf } from '../../../src/internals.ts'
import type { Storage } from '../../../src/ports/storage.ts'
import { inProcessCluster, linkedDeviceInCluster } from '../../helpers/cluster-in-process.ts'

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

test('a stop while a device scan is opening devices waits for it: the lease is handed back and no session stays open', async () => {
  const network = new MemoryNetwork()
  let slow = false
  /** Lease reads and writes take 100 ms while `slow`: the scan is still taking the device when the stop comes. */
  const slowLeases = (storage: Storage): Storage =>
    new Proxy(storage, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver)
        if (typeof value !== 'function' || name === 'list') return typeof value === 'function' ? value.bind(target) : value
        return async (key: string, ...rest: unknown[]) => {
          if (slow && String(key).includes('device-lease')) await sleep(100)
          return value.call(target, key, ...rest)
        }
      },
    })
  let raw: Storage | undefined
  const members = await inProcessCluster(
    1,
    (_, storage) => (
      (raw = storage),
      { storage: slowLeases(storage), transport: memoryTransport({ network }), instances: { heartbeatMs: 60_000, ttlMs: 120_000 } }
    ),
  )
  const [member] = members
  const { deviceId } = await linkedDeviceInCluster(members, network, 'stop-scan@example.com')
  const wiring = internalsOf(member!.gateway)
  await wiring.leases.release(deviceId) // nobody holds the device: the next scan takes it
  slow = true
  const scanning = wiring.balancer.start()
  await sleep(250) // the scan is taking the lease
  await member!.stop()
  await scanning
  await sleep(300)
  const leaseKey = [...(await collect(raw!))].find(key => key.includes('device-lease') && key.includes(deviceId))!
  const lease = await raw!.get<{ owner: string | null }>(leaseKey)
  assert.is(lease?.owner, null, 'the lease is handed back, not left named after the stopped instance')
  assert.is.not((await wiring.transport.status(deviceId)).state, 'open', 'no session opened on the stopped transport')
})

async function collect(storage: Storage): Promise<string[]> {
  const keys: string[] = []
  for await (const [key] of storage.list('')) keys.push(key)
  return keys
}

test.run()
