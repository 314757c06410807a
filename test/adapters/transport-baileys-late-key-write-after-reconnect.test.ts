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

// As transport-baileys-late-key-write-after-handover, inside one process: socket A's transaction
// commit fails once (a store blip) and Baileys retries it (transactionOpts: 10 tries, 3 s apart)
// whether or not A has ended since. A ends with a 428 (or a 515 restart); the session opens socket B
// for the device in this process; B advances the session; A's retry then lands A's older session
// over B's, in the store and in the device's key cache, which B reads from: B's next encrypt or
// decrypt runs on a rolled-back ratchet (Bad MAC / a reused counter).
for (const code of [428, 515]) {
  test(`a key commit retry of a socket ended by a ${code} never lands over the keys the next socket of the device wrote`, async () => {
    const shared = new RecordingStorage()
    const a = switchable(shared)
    const s = await setupBaileys({ storage: a.storage })
    try {
      await s.linked('dev', ME)
      const socketA = s.fake.current('dev')
      const keysA = baileys.addTransactionCapability(socketA.config.auth.keys, quiet as never, { maxCommitRetries: 10, delayBetweenTriesMs: 150 })
      a.down = true
      const commit = keysA.transaction(async () => keysA.set({ session: { [SESSION]: Buffer.from('A-ratchet') } }), SESSION).catch(err => err)
      await new Promise(resolve => setTimeout(resolve, 20))
      a.down = false

      await socketA.close(code)
      await waitFor(() => s.fake.current('dev') !== socketA && s.fake.current('dev').opened, 'socket B open')
      const socketB = s.fake.current('dev')
      await socketB.storeKeys({ session: { [SESSION]: Buffer.from('B-ratchet') } })

      await commit
      await settle()
      const stored = JSON.parse(String(await shared.get(`device:dev:auth:key:session:${SESSION}`)), baileys.BufferJSON.reviver)
      assert.is(text(stored), 'B-ratchet', "the store keeps the current socket's session")
      const read = await socketB.config.auth.keys.get('session', [SESSION])
      assert.is(text(read[SESSION]), 'B-ratchet', 'socket B reads its own session (key cache)')
    } finally {
      await s.transport.stop()
    }
  })
}

test.run()
