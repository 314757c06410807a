import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { RecordingStorage } from '../helpers/recording-storage.ts'
import { assertLoggedOut, setupBaileys } from '../helpers/baileys-setup.ts'
import { waitFor } from '../helpers/fake-baileys/index.ts'

/**
 * A logout (operation 6) of a linked device whose session another client replaced (440): its
 * credentials are still good for WhatsApp (the other client uses them), and the phone lists the
 * device until WhatsApp hears of the logout. So the logout opens the session again and unlinks
 * through it; one that does not open in time, or that another client takes before it opens, fails
 * and keeps the credentials. Before, the credentials were deleted without unlinking: the phone kept
 * listing the device, still in use.
 */
const test = suite('Baileys transport: a logout of a replaced session')

test('a logout of a replaced session opens it again and unlinks it before deleting the state', async () => {
  const storage = new RecordingStorage()
  const s = await setupBaileys({ storage })
  await s.linked('dev', '5511999990000')
  const before = s.fake.socketsOf('dev').length
  await s.fake.current('dev').close(440)
  await waitFor(() => s.statuses('dev').at(-1)?.state === 'replaced', 'replaced')
  await s.transport.logout('dev')
  assert.ok(s.fake.socketsOf('dev').length > before, 'the session was opened again')
  assertLoggedOut(s, storage)
  await s.transport.stop()
})

// One that does not open in time: test/adapters/transport-baileys-logout-reconnecting, for both states.

test('a logout whose reopened session another client takes (440) before it opens fails and keeps the credentials', async () => {
  const storage = new RecordingStorage()
  const s = await setupBaileys({ storage, openTimeoutMs: 10_000 })
  await s.linked('dev', '5511999990000')
  s.fake.behaviour.autoOpen = false // the next socket stays connecting until the test acts
  const before = s.fake.socketsOf('dev').length
  await s.fake.current('dev').close(428)
  await waitFor(() => s.statuses('dev').at(-1)?.state === 'connecting', 'connecting')
  let done = false
  const logout = s.transport.logout('dev').then(
    () => undefined,
    (error: unknown) => error,
  )
  void logout.finally(() => (done = true))
  await waitFor(() => done || s.fake.socketsOf('dev').length > before, 'a new socket or the logout', 10_000)
  if (!done) await s.fake.latest('dev')!.close(440) // another client with the same credentials connects first
  assert.ok((await logout) instanceof Error, 'the logout failed: WhatsApp did not hear of it')
  assert.ok(s.fake.socketsOf('dev').every(socket => !socket.calls.some(c => c.method === 'logout')))
  assert.equal(storage.keys('device:dev:auth:creds'), ['device:dev:auth:creds'], 'the credentials stay (the phone still lists the device)')
  await s.transport.stop()
})

test('a logout of a replaced session that gives up before it opens leaves it replaced, not reconnecting by itself', async () => {
  const storage = new RecordingStorage()
  const s = await setupBaileys({ storage, openTimeoutMs: 300 })
  await s.linked('dev', '5511999990000')
  await s.fake.current('dev').close(440)
  await waitFor(() => s.statuses('dev').at(-1)?.state === 'replaced', 'replaced')
  s.fake.behaviour.autoOpen = false // the reopened session does not open before the logout gives up
  const failure = await s.transport.logout('dev').then(
    () => undefined,
    (error: unknown) => error,
  )
  assert.ok(failure instanceof Error, 'the logout failed')
  // 440 decided (adapters/transport-baileys/README.md): a replaced session is never reopened by the adapter itself, or it takes the session from the other client
  assert.is(s.transport.statusNow('dev')?.state, 'replaced', 'still replaced once the logout gave up')
  assert.ok(s.fake.current('dev').closed, 'the socket the logout opened is ended')
  assert.equal(storage.keys('device:dev:auth:creds'), ['device:dev:auth:creds'], 'the credentials stay')
  s.fake.behaviour.autoOpen = true
  await s.transport.connect('dev') // the caller (the lease holder) decides when to reopen it
  await waitFor(() => s.statuses('dev').at(-1)?.state === 'open', 'open again through connect()')
  await s.transport.stop()
})

test.run()
