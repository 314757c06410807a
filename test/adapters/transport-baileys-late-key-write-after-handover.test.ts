import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as baileys from '@whiskeysockets/baileys'
import { setupBaileys } from '../helpers/baileys-setup.ts'
import { settle, waitFor } from '../helpers/fake-baileys/index.ts'
import { ME } from '../helpers/baileys-fixtures.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'
import { switchable } from '../helpers/switchable-storage.ts'

const noop = () => undefined
const quiet = { trace: noop, debug: noop, info: noop, warn: noop, error: noop, child: () => quiet, level: 'silent' }
const SESSION = '5511988887777.0'
const text = (value: unknown) => (value == null ? undefined : Buffer.from(value as Uint8Array).toString())

// Baileys wraps the adapter's key store in addTransactionCapability (socket.js) and commits a
// transaction's key changes with retries (transactionOpts: 10 tries, 3 s apart), whether or not the
// socket has ended since. Instance A's commit fails once (a store blip, or its fence refusing the
// write); A hands the device over (disconnect(): no write in flight at that moment, so its flush
// resolves at once); B resumes the device and advances the session; A's retry then lands and puts
// A's older session over B's. The next restart (or B's key cache expiring) reads A's: Bad MAC.
test('a key write a disconnected socket still commits (a Baileys commit retry) never lands over the keys of the instance that took the device over', async () => {
  const shared = new RecordingStorage()
  const a = switchable(shared)
  const first = await setupBaileys({ storage: a.storage })
  const second = await setupBaileys({ storage: shared })
  try {
    await first.linked('dev', ME)
    const socketA = first.fake.current('dev')
    const keysA = baileys.addTransactionCapability(socketA.config.auth.keys, quiet as never, { maxCommitRetries: 10, delayBetweenTriesMs: 150 })
    a.down = true
    const commit = keysA.transaction(async () => keysA.set({ session: { [SESSION]: Buffer.from('A-ratchet') } }), SESSION).catch(err => err)
    await new Promise(resolve => setTimeout(resolve, 20))
    a.down = false
    await first.transport.disconnect('dev')

    await second.transport.connect('dev')
    await waitFor(() => second.fake.latest('dev')?.opened === true, 'open on B')
    await second.fake.current('dev').storeKeys({ session: { [SESSION]: Buffer.from('B-ratchet') } })
    assert.is(
      text(
        (await shared.get(`device:dev:auth:key:session:${SESSION}`)) &&
          JSON.parse(String(await shared.get(`device:dev:auth:key:session:${SESSION}`)), baileys.BufferJSON.reviver),
      ),
      'B-ratchet',
    )

    await commit
    await settle()
    const stored = JSON.parse(String(await shared.get(`device:dev:auth:key:session:${SESSION}`)), baileys.BufferJSON.reviver)
    assert.is(text(stored), 'B-ratchet', "the store keeps the new holder's session")
  } finally {
    await first.transport.stop()
    await second.transport.stop()
  }
})

test.run()
