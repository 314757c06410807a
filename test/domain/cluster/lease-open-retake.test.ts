import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { DeviceLeases } from '../../../src/domain/cluster/device-leases.ts'
import type { Instances } from '../../../src/domain/instances.ts'
import { silentLogger } from '../../../src/logger.ts'
import type { Transport } from '../../../src/ports/transport.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'

/**
 * open() closes the session it opened when the take it opened it for was let go meanwhile. When the
 * device was taken again (a newer epoch) while that connect ran, the session is the newer take's:
 * it stays open.
 */
const test = suite('device leases: open() across a let-go and a re-take')

test('an open whose connect outlives a hand-back and a re-take leaves the newer take its session', async () => {
  const registry = {
    id: 'instance-a',
    standing: true,
    fenceCount: 0,
    isAlive: (id: string) => id === 'instance-a',
    confirmGone: async () => true,
    setLoad: () => {},
    get view() {
      return registry
    },
    events: { on: () => {} },
  }
  let finishFirst = () => {}
  const transport = {
    state: 'closed',
    connects: 0,
    async connect() {
      // The first connect is slow (a network round trip); it ends with the session open.
      if (transport.connects++ === 0) await new Promise<void>(resolve => (finishFirst = resolve))
      transport.state = 'open'
    },
    async disconnect() {
      transport.state = 'closed'
    },
  }
  const leases = new DeviceLeases(
    memoryStorage(),
    new KeyedLock(),
    registry as unknown as Instances,
    transport as unknown as Transport,
    { clustered: true },
    silentLogger,
  )

  const first = leases.open('d1') // its connect waits
  await new Promise(resolve => setTimeout(resolve, 10))
  await leases.release('d1') // let go meanwhile (a failed reconcile, a stop)...
  assert.ok(await leases.open('d1'), '...and taken again at a newer epoch, its session opened')
  finishFirst()
  await first
  assert.ok(leases.holds('d1'), 'still held by the newer take')
  assert.is(transport.state, 'open', 'the newer take keeps its session open')
})

test.run()
