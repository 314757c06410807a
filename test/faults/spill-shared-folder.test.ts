import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { readdirSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { internalsOf } from '../../src/internals.ts'
import { hostTag } from '../../src/store/process-alive.ts'
import { startGateway, waitFor } from '../helpers/gateway.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { outboxKeyOfText } from '../helpers/messaging.ts'
import { freePort, tempDir } from '../helpers/standalone.ts'
import { switchable } from '../helpers/switchable-storage.ts'

/**
 * Several gateways on one host share the default spill folder (`<tmpdir>/zapgate-spill`) whatever
 * their stores. What one spilled (its store down when it stopped, or a crash) is replayed by the next
 * process on its own store, never taken by a gateway on another store, which would record it there
 * and drop it (no such device).
 */
const test = suite('spill files in a folder shared by gateways on different stores')

const DEVICE_PHONE = '5511999990001'
const FRIEND = '5511988880001'

test("a gateway on another store leaves a gone process's spill files alone; the next process on that store replays them", async () => {
  const spillDir = tempDir('zapgate-spill-shared-')
  const inner = memoryStorage()
  const store = switchable(inner)
  const first = await startGateway({ storage: store.storage, cacheTtlMs: 0, allowPrivateUrls: true, rateLimit: false, spillDir })
  const { authkey } = await first.register()
  // A receiver that is never there: the event stays in the outbox, where the test looks for it.
  const device = await first.linkedDevice(authkey, 'loja', DEVICE_PHONE, { webhook: `http://127.0.0.1:${await freePort()}/hook` })
  store.down = true
  const id = await first.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'while the store is down' })
  assert.is(internalsOf(first.gateway).incoming.size, 1, 'kept, the store being down')
  await first.stop() // the store still down: spilled
  // As if that process were gone (crashed or stopped): its files named by a pid no longer running.
  const gone = spawnSync(process.execPath, ['-e', '0']).pid
  const spilled = readdirSync(spillDir).filter(name => name.startsWith('incoming-'))
  assert.is(spilled.length, 1, 'the event spilled')
  const storeId = /^incoming-([0-9a-f]{16})-/.exec(spilled[0]!)?.[1]
  assert.ok(storeId, `the spill file is named by its store: ${spilled[0]}`)
  const left = `incoming-${storeId}-${hostTag()}-${gone}.jsonl`
  renameSync(join(spillDir, spilled[0]!), join(spillDir, left))

  const other = await startGateway({ allowPrivateUrls: true, rateLimit: false, spillDir }) // another store, the same folder
  await new Promise(resolve => setTimeout(resolve, 300))
  assert.ok(readdirSync(spillDir).includes(left), 'the gateway on another store did not take it over')
  await other.stop()

  store.down = false
  const next = await startGateway({ storage: store.storage, cacheTtlMs: 0, allowPrivateUrls: true, rateLimit: false, spillDir })
  try {
    const key = outboxKeyOfText(device, id, FRIEND)
    await waitFor(async () => (await inner.get(key)) !== undefined, 5_000, 'the spilled message recorded in its store by the next process on it')
    assert.not.ok(readdirSync(spillDir).includes(left), 'taken over')
  } finally {
    await next.stop()
  }
})

test.run()
