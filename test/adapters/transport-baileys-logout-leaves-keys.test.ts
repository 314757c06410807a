import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { setupBaileys } from '../helpers/baileys-setup.ts'
import { settle } from '../helpers/fake-baileys/index.ts'
import { ME } from '../helpers/baileys-fixtures.ts'
import { pausingStore } from '../helpers/pausing-storage.ts'

// logout() promises "delete the credentials and keys"; clear() drops key writes that *start* after it,
// but one already on its way to the store (a session key written for the last message) lands after the
// namespace was deleted: a private signal key of the unlinked account stays in the store for good.
test('after logout() no signal key of the device is left in the store, even one whose write was on its way', async () => {
  const paused = pausingStore()
  const s = await setupBaileys({ storage: paused.storage })
  try {
    await s.linked('dev', ME)
    const socket = s.fake.current('dev')
    const held = paused.pause('set', 'device:dev:auth:key:session:')
    const write = socket.storeKeys({ session: { '5511988887777.0': Buffer.from('ratchet') } })
    await held.reached
    const release = setTimeout(() => held.release(), 200)
    await s.transport.logout('dev')
    clearTimeout(release)
    held.release()
    await write
    await settle()
    assert.equal(await paused.keys('device:dev:'), [], 'nothing of the device is left')
  } finally {
    await s.transport.stop()
  }
})

test.run()
