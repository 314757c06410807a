import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { Instances } from '../../src/domain/instances.ts'
import { silentLogger } from '../../src/logger.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { needing, POSTGRES, REDIS } from '../helpers/requires.ts'

/**
 * An instance record's store expiry is stamped by its writer's clock and judged by each reader's
 * (Keyv's wrapper), and a reader that finds it expired takes the instance for gone, with its devices.
 * Liveness is the heartbeat counter moving, so the expiry only clears records nobody removed: a
 * reader whose clock is a minute ahead must still find a live instance (30 s of margin did not: a
 * host 42 s ahead took a live instance's devices, two sessions of each).
 */
const test = suite('instance records read by a host whose clock is ahead')

for (const backend of [REDIS, POSTGRES]) {
  needing(
    test,
    backend,
    `the instance record expiry test on ${backend.name}`,
  )(`${backend.name}: a reader 60 s ahead finds a live instance alive`, async () => {
    const namespace = `record-expiry-${process.pid}-${Date.now()}`
    const [writerStore, readerStore] = [await storageFromUrl(backend.value!, { namespace }), await storageFromUrl(backend.value!, { namespace })]
    const settings = { heartbeatMs: 60_000, ttlMs: 15_000 } // one heartbeat (the start's) in the test's time: its record as written then
    const writer = new Instances(writerStore, new KeyedLock(), settings, silentLogger)
    const realNow = Date.now
    try {
      await writer.start(true)
      Date.now = () => realNow() + 60_000 // the reader's host, a minute ahead
      const reader = new Instances(readerStore, new KeyedLock(), settings, silentLogger)
      await reader.start(true)
      assert.ok(
        reader.view.liveRecords.some(record => record.id === writer.id),
        'the writer is alive to the reader',
      )
      assert.ok(await reader.view.recordOf(writer.id), 'its record is there (an expired one is deleted by the read)')
      Date.now = realNow
      await reader.stop()
    } finally {
      Date.now = realNow
      await writer.stop()
      for (const store of [writerStore, readerStore]) await store.close?.()
    }
  })
}

test.run()
