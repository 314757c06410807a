import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { outboxKey } from '../../../src/domain/webhooks/outbox-store.ts'
import { SpillFile } from '../../../src/store/spill-file.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { lateRecord, outbox, recordingSender, texts } from '../../helpers/outbox.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'
import { tempDir } from '../../helpers/standalone.ts'

/** What a starting outbox delivers whatever its spill file does: the events the store already holds. */
const test = suite('WebhookOutbox start: the stored events go out')

test('events pending in the store are delivered even when the spill folder cannot be made at start (start rejects, delivery goes on)', async () => {
  const storage = memoryStorage()
  const pending = lateRecord('before-restart', 'gone-instance')
  await storage.set(`webhook-outbox:${outboxKey(pending.deviceId, pending.id)}`, pending)
  const notADir = join(tempDir('zapgate-outbox-'), 'spill')
  writeFileSync(notADir, '') // a file where the spill folder should be: mkdir fails
  const sender = recordingSender()
  const box = outbox(storage, sender, {}, soloLiveness(), new SpillFile(notADir, 'webhooks'))
  const started = await box.start().then(
    () => 'resolved',
    (err: NodeJS.ErrnoException) => err.code,
  )
  assert.ok(started !== 'resolved', 'start says the spilled events were not replayed')
  await waitFor(() => sender.sent.length === 1, 5000, 'the pending event')
  assert.equal(texts(sender), ['before-restart'])
  await box.close()
})

test.run()
