import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Instances } from '../../src/domain/instances.ts'
import { silentLogger } from '../../src/logger.ts'
import type { Storage } from '../../src/ports/storage.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { waitFor } from '../helpers/gateway.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'

/**
 * A graceful stop leaves the registry (docs/scaling.md, "Graceful leave": the others take over at
 * once), even when it comes while a heartbeat is on its way to the store: the stopped instance's
 * record is not left behind (renewed after its removal, or re-registered), where the others would
 * take it for alive for a whole TTL.
 */
const test = suite('instances: stop during a heartbeat')

/** A storage whose compareAndSet waits while held (a heartbeat that is slow to land). */
function slowSwaps(storage: Storage) {
  let gate: Promise<void> | undefined
  let open = () => {}
  let waiting = 0
  const wrapped = new Proxy(storage, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (name !== 'compareAndSet' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value
      return async (...args: unknown[]) => {
        if (gate) (waiting++, await gate)
        return value.apply(target, args)
      }
    },
  })
  return {
    storage: wrapped,
    get waiting() {
      return waiting
    },
    hold: () => void (gate = new Promise(resolve => (open = resolve))),
    release: () => ((gate = undefined), open()),
  }
}

test('stop while a heartbeat is under way: no record of the stopped instance stays in the store', async () => {
  const shared = memoryStorage()
  const slow = slowSwaps(shared.connectAgain())
  const a = new Instances(slow.storage, new KeyedLock(), { heartbeatMs: 50, ttlMs: 600 }, silentLogger)
  await a.start(true)
  slow.hold()
  await waitFor(() => slow.waiting > 0, 5_000, 'a heartbeat under way')
  const stopped = a.stop()
  await new Promise(resolve => setTimeout(resolve, 20))
  slow.release()
  await stopped
  await new Promise(resolve => setTimeout(resolve, 100))
  assert.is(await shared.get(`instance:${a.id}`), undefined, 'the stopped instance left no record behind')
})

test.run()
