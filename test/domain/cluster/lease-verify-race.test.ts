import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { DeviceLeases } from '../../../src/domain/cluster/device-leases.ts'
import type { Instances } from '../../../src/domain/instances.ts'
import { silentLogger } from '../../../src/logger.ts'
import type { Storage } from '../../../src/ports/storage.ts'
import type { Transport } from '../../../src/ports/transport.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'

/**
 * verify() lets go of the leases taken over by others. A check that read the lease while this
 * instance handed the device back and took it again (a new epoch) must not let go of the new take:
 * the lease names this instance at the epoch it holds, and its session stays open.
 */
const test = suite('device leases: verify across a hand-back and re-take')

test('a verify under way when the device is released and taken again keeps the new take and its session', async () => {
  let gate: Promise<void> | undefined
  let open = () => {}
  const storage = new Proxy(memoryStorage(), {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function') return value
      if (name !== 'get') return value.bind(target)
      return async (key: string) => {
        const wait = gate
        gate = undefined // one read waits
        await wait
        return value.call(target, key)
      }
    },
  }) as Storage
  const registry = {
    id: 'instance-a',
    standing: true,
    fenceCount: 0,
    isAlive: (id: string) => id === 'instance-a',
    setLoad: () => {},
    get view() {
      return registry
    },
    events: { on: () => {} },
  }
  const sessions = { connects: 0, disconnects: 0 }
  const transport = { connect: async () => void sessions.connects++, disconnect: async () => void sessions.disconnects++ }
  const leases = new DeviceLeases(
    storage,
    new KeyedLock(),
    registry as unknown as Instances,
    transport as unknown as Transport,
    { clustered: true },
    silentLogger,
  )

  assert.ok(await leases.open('d1'))
  gate = new Promise(resolve => (open = resolve))
  const verified = leases.verify() // reads the lease... slowly
  await leases.release('d1')
  assert.ok(await leases.open('d1'), 'taken again at a new epoch')
  const disconnects = sessions.disconnects
  open()
  await verified
  assert.ok(leases.holds('d1'), 'still held: the lease names this instance at the epoch it holds')
  assert.is(sessions.disconnects, disconnects, 'its session was not closed')
})

test.run()
