import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { setupBaileys } from '../helpers/baileys-setup.ts'
import { settle, waitFor } from '../helpers/fake-baileys/index.ts'
import { ME } from '../helpers/baileys-fixtures.ts'
import { pausingStore } from '../helpers/pausing-storage.ts'

const SESSION = '5511988887777.0'
const bytes = (s: string) => Buffer.from(s)

// A socket replaced (440) while its last session-key write is still on its way to a slow store; the
// gateway opens the device again (the lease holder reconciles replaced sessions every heartbeat).
// resume() reloads the creds "after the writes under way" and drops the signal key cache, but it waits
// only for creds writes: the new socket reads the session from the store before the key write lands,
// gets the previous ratchet state, keeps it in its cache, and writes it back later.
test('a socket opened by resume() reads the signal keys the previous socket wrote, even while that write is still on its way', async () => {
  const paused = pausingStore()
  const s = await setupBaileys({ storage: paused.storage })
  try {
    await s.linked('dev', ME)
    const first = s.fake.current('dev')
    await first.storeKeys({ session: { [SESSION]: bytes('ratchet-1') } })
    const held = paused.pause('set', 'device:dev:auth:key:session:')
    void first.storeKeys({ session: { [SESSION]: bytes('ratchet-2') } })
    await held.reached
    await first.replaced()
    await settle()
    assert.is(s.statuses('dev').at(-1)?.state, 'replaced')
    const count = s.fake.socketsOf('dev').length
    const release = setTimeout(() => held.release(), 300)
    const connecting = s.transport.connect('dev')
    await waitFor(() => s.fake.socketsOf('dev').length > count, 'a new socket')
    const second = s.fake.current('dev')
    const got = await second.config.auth.keys.get('session', [SESSION])
    await connecting
    clearTimeout(release)
    held.release()
    assert.is(Buffer.from(got[SESSION] as Uint8Array).toString(), 'ratchet-2', 'the new socket starts from the last ratchet state the device wrote')
  } finally {
    await s.transport.stop()
  }
})

test.run()
