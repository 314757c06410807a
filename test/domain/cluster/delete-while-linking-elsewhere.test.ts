import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport, simulatorServer } from '../../../adapters/transport-memory/index.ts'
import type { GatewayOptions } from '../../../src/index.ts'
import type { Storage } from '../../../src/ports/storage.ts'
import { inProcessCluster, registerAt } from '../../helpers/cluster-in-process.ts'
import { post } from '../../helpers/http.ts'
import { waitFor } from '../../helpers/gateway.ts'

/**
 * Operation 6 on one instance while operation 3 starts the link of the same unlinked device, held by
 * no instance, on another. The instances share a simulator server (remote mode): as with Baileys, a
 * pending link lives in the process that started it, and a logout elsewhere of a device never linked
 * cannot cancel it. Before, the deleting instance worked without the device's lease: the other
 * instance's QR stayed scannable, and a phone scanning it was linked to a deleted device.
 */

/** A store whose writes of `gate.key` wait while `gate.closed` is set (`gate.entered` resolves at the first such write), and whose reads of `watch.key` show `watch.seen` what they found. */
function gatedStore(storage: Storage) {
  let open!: () => void
  let entered!: () => void
  const gate = {
    key: '',
    closed: false,
    opened: new Promise<void>(resolve => (open = resolve)),
    entered: new Promise<void>(resolve => (entered = resolve)),
    open: () => ((gate.closed = false), open()),
  }
  const watch = { key: '', seen: (_value: unknown) => {} }
  const wrapped = new Proxy(storage, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function') return value
      if (name === 'get')
        return async (key: string) => {
          const found = await value.call(target, key)
          if (watch.key !== '' && key === watch.key) watch.seen(found)
          return found
        }
      if (!['set', 'compareAndSet', 'add', 'delete', 'deleteIfEqual'].includes(name as string)) return value
      return async (key: string, ...rest: unknown[]) => {
        if (gate.closed && gate.key !== '' && key === gate.key) (entered(), await gate.opened)
        return value.call(target, key, ...rest)
      }
    },
  }) as Storage
  return { storage: wrapped, gate, watch }
}

test('a device deleted on one instance while another starts its link cannot be linked by the QR that link shows', async () => {
  const sim = await simulatorServer({ port: 0, host: '127.0.0.1' })
  const stores: ReturnType<typeof gatedStore>[] = []
  // Heartbeats far apart: no balancer scan takes the device. Member 0 makes the device and leaves; 1 deletes (X), 2 links (T).
  const members = await inProcessCluster(3, (index, storage) => {
    const options = { transport: memoryTransport({ simUrl: sim.url }), instances: { heartbeatMs: 60_000, ttlMs: 120_000 } }
    stores[index] = gatedStore(storage)
    return { ...options, storage: stores[index]!.storage }
  })
  const { gate } = stores[1]! // X's
  const { watch } = stores[2]! // T's
  try {
    const authkey = await registerAt(members[0]!.url, 'delete-while-linking-elsewhere@example.com')
    const made = await post(`${members[0]!.url}/api/v2/qrcode`, { authkey, setAppkey: 'loja' })
    assert.is(made.status, 200, made.text)
    const deviceId: string = made.body.id
    await members[0]!.stop()
    const [, x, t] = members
    assert.not.ok(x!.holds(deviceId) || t!.holds(deviceId), 'the device is held by no instance')
    const scanned = () =>
      sim.network.scan({ deviceId }, '5511944443333').then(
        () => true,
        () => false,
      )
    assert.not.ok(await scanned(), 'the instance that left took its link with it')

    // X's deletion waits at its first write of the device record; meanwhile T starts the device's link.
    Object.assign(gate, { key: `device:${deviceId}`, closed: true })
    const deleting = post(`${x!.url}/api/developer`, { authkey, message: 'loja', apagarDispositivo: 'true' })
    await gate.entered
    // T links the device itself (its answer), or finds that another instance (X) holds it and sends the request on there, where it waits for the deletion.
    let forwarded = false
    const heldElsewhere = new Promise<void>(resolve => {
      watch.key = `device-lease:${deviceId}`
      watch.seen = lease => {
        const owner = (lease as { owner?: string | null } | undefined)?.owner
        if (owner && owner !== t!.id) ((forwarded = true), resolve())
      }
    })
    const linking = post(`${t!.url}/api/v2/qrcode`, { authkey, setAppkey: 'loja' })
    await Promise.race([linking, heldElsewhere])
    gate.open()
    const [deleted, linked] = await Promise.all([deleting, linking])
    assert.equal([deleted.status, deleted.body.message], [200, 'Dispositivo excluído com sucesso.'])

    assert.not.ok(
      await scanned(),
      `a phone linked the deleted device (operation 3 answered ${linked.status}${forwarded ? ', forwarded' : ''}: ${linked.body.message})`,
    )
    assert.is(sim.network.linkedPhone(deviceId), undefined, 'the deleted device is linked to no phone')
    // Deleted by another instance: T may answer from its cached copy until the cache epoch's next read (cacheTtlMs, README.md).
    const status = () => post(`${t!.url}/api/developer`, { authkey, message: deviceId, checkDispositivo: 'true' })
    await waitFor(async () => (await status()).status === 404, 5_000, 'the device deleted on every instance')
  } finally {
    stores[1]?.gate.open()
    for (const member of members) await member.stop().catch(() => {})
    await sim.close()
  }
})

test('a full instance (cluster.maxDevices) still deletes an unlinked device nobody holds (the lease it takes for that opens no session)', async () => {
  const network = new MemoryNetwork()
  const members = await inProcessCluster(2, () => ({
    transport: memoryTransport({ network }),
    instances: { heartbeatMs: 60_000, ttlMs: 120_000 },
    cluster: { maxDevices: 1 } as GatewayOptions['cluster'],
  }))
  try {
    const authkey = await registerAt(members[0]!.url, 'delete-on-full-instance@example.com')
    const made = await post(`${members[0]!.url}/api/v2/qrcode`, { authkey, setAppkey: 'loja' })
    assert.is(made.status, 200, made.text)
    await members[0]!.stop()
    const [, full] = members
    const other = await post(`${full!.url}/api/v2/qrcode`, { authkey, setAppkey: 'balcao' }) // held here: the instance is full
    assert.is(other.status, 200, other.text)
    assert.not.ok(full!.holds(made.body.id), 'the device is held by no instance')
    const deleted = await post(`${full!.url}/api/developer`, { authkey, message: 'loja', apagarDispositivo: 'true' })
    assert.equal([deleted.status, deleted.body.message], [200, 'Dispositivo excluído com sucesso.'])
    const status = await post(`${full!.url}/api/developer`, { authkey, message: 'loja', checkDispositivo: 'true' })
    assert.is(status.status, 404)
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test.run()
