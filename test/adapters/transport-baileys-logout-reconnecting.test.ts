import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { RecordingStorage } from '../helpers/recording-storage.ts'
import { assertLoggedOut, setupBaileys } from '../helpers/baileys-setup.ts'
import { waitFor } from '../helpers/fake-baileys/index.ts'

/**
 * A logout (operation 6) of a linked device whose socket closed for a moment (reconnecting): the
 * phone lists the device until WhatsApp hears of the logout, so the logout waits for the socket to
 * open again and unlinks through it; one that does not open in time fails and keeps the credentials
 * (the deletion answers 500 and the device stays whole, still linked).
 */
const test = suite('Baileys transport: a logout while the device reconnects')

test('a logout while reconnecting unlinks through the socket once it opens, then deletes the state', async () => {
  const storage = new RecordingStorage()
  const s = await setupBaileys({ storage, behaviour: { autoOpen: true } })
  await s.linked('dev', '5511999990000')
  s.fake.behaviour.autoOpen = false // the next socket stays connecting until the test opens it
  const before = s.fake.socketsOf('dev').length
  await s.fake.current('dev').close(428)
  await waitFor(() => s.statuses('dev').at(-1)?.state === 'connecting', 'connecting')
  let done = false
  const logout = s.transport.logout('dev').finally(() => (done = true))
  await waitFor(() => done || s.fake.socketsOf('dev').length > before, 'a new socket or the logout', 10_000)
  if (!done) s.fake.latest('dev')!.open() // WhatsApp answers again
  await logout
  assertLoggedOut(s, storage)
  await s.transport.stop()
})

// A replaced session (440, another client took it) is opened again for its logout as a reconnecting one is (transport-baileys-logout-replaced).
for (const [code, state] of [
  [428, 'connecting'],
  [440, 'replaced'],
] as const) {
  test(`a logout of a ${state} session (${code}) fails when the socket does not open in time, and keeps the credentials`, async () => {
    const storage = new RecordingStorage()
    const s = await setupBaileys({ storage, openTimeoutMs: 300 })
    await s.linked('dev', '5511999990000')
    s.fake.behaviour.autoOpen = false // no socket opens again
    await s.fake.current('dev').close(code)
    await waitFor(() => s.statuses('dev').at(-1)?.state === state, state)
    const failure = await s.transport.logout('dev').then(
      () => undefined,
      (error: unknown) => error,
    )
    assert.ok(failure instanceof Error, 'the logout failed')
    assert.ok(s.fake.socketsOf('dev').every(socket => !socket.calls.some(c => c.method === 'logout')))
    assert.equal(storage.keys('device:dev:auth:creds'), ['device:dev:auth:creds'], 'the credentials stay (the phone still lists the device)')
    await s.transport.stop()
  })
}

test.run()
