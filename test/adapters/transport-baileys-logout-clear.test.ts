import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { RecordingStorage } from '../helpers/recording-storage.ts'
import { setupBaileys } from '../helpers/baileys-setup.ts'
import { settle, waitFor } from '../helpers/fake-baileys/index.ts'

/**
 * A 401 (unlinked from the phone) deletes the device's credentials and keys, hundreds of them, which
 * takes a while on a real store. Meanwhile the device is not reported open, and a disconnect or a
 * stop that comes then does not keep `logged-out` from being reported: the credentials are gone, and
 * the device needs a new link.
 */
const test = suite('Baileys transport: a logout while its keys are deleted')

/** A linked device over a store whose deletes of its keys take 5 ms each, with 300 signal keys. */
async function linkedWithSlowDeletes() {
  const storage = new (class extends RecordingStorage {
    override async delete(key: string): Promise<boolean> {
      if (key.startsWith('device:dev:auth:')) await settle(5)
      return super.delete(key)
    }
  })()
  const s = await setupBaileys({ storage })
  await s.linked('dev', '5511999990000', '123456789@lid')
  for (let i = 0; i < 300; i++) await storage.set(`device:dev:auth:key:pre-key:${i}`, '{}')
  return { s, storage }
}

for (const cut of ['disconnect', 'stop'] as const) {
  test(`a ${cut} while the keys of a logged-out device are deleted: not open meanwhile, logged-out reported, the credentials gone`, async () => {
    const { s, storage } = await linkedWithSlowDeletes()
    await s.fake.current('dev').close(401)
    await settle(30) // the deletes under way
    const during = await s.transport.status('dev')
    assert.is(during.connected, false, `reported ${during.state} while its credentials were being deleted`)
    await (cut === 'disconnect' ? s.transport.disconnect('dev') : s.transport.stop())
    await waitFor(() => s.statuses('dev').at(-1)?.state === 'logged-out', 'logged-out', 10_000)
    assert.equal(storage.keys('device:dev:auth:creds'), [])
    if (cut === 'disconnect') await s.transport.stop()
  })
}

test.run()
