import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { rmSync } from 'node:fs'
import { startStandalone, tempDir, type StandaloneServer } from '../helpers/standalone.ts'
import { startNpmGroup, type NpmGroup } from '../helpers/npm-group.ts'
import { post } from '../helpers/http.ts'
import { registerAt } from '../helpers/cluster-in-process.ts'
import { waitFor } from '../helpers/gateway.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

/**
 * SIGTERM to `npm start`'s process group (a supervisor's stop) while 3 webhooks are in flight to a
 * receiver that takes 3 s to answer 200 (the time-out is 15 s). The receiver has every POST: a stop
 * that cut them short and released the events delivered all 3 again after the restart (seen before
 * the fix: 6 deliveries). A graceful stop lets them finish.
 */
const test = suite('npm start: SIGTERM to the group with webhooks in flight to a slow receiver')

const DEVICE_PHONE = '5511999990001'
const FRIEND = '5511988880002'

test('3 deliveries in flight at SIGTERM, each answered 200 after 3 s: after the restart the receiver has had each event once', async () => {
  const dir = tempDir()
  const env = { GATEWAY_STORE: `sqlite://${join(dir, 'gateway.sqlite')}`, GATEWAY_ALLOW_PRIVATE_URLS: '1', GATEWAY_RATE_LIMIT: 'off' }
  let group: NpmGroup | undefined
  let server: StandaloneServer | undefined
  let receiver: Receiver | undefined
  try {
    receiver = await startReceiver(() => ({ status: 200, delayMs: 3_000 }))
    group = await startNpmGroup({ GATEWAY_TRANSPORT: 'memory', ...env })
    const api = (path: string, body: Record<string, unknown>) => post(group!.url + path, body)
    const authkey = await registerAt(group.url, 'ana@example.com')
    const created = await api('/api/v2/qrcode', { authkey, setAppkey: 'lenta', webhook: receiver.url })
    assert.is(created.status, 200, created.text)
    assert.is((await api('/_sim/scan', { authkey, appkey: 'lenta', phone: DEVICE_PHONE })).status, 200)
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push((await api('/_sim/send', { from: FRIEND, to: DEVICE_PHONE, type: 'text', text: `evento ${i}` })).body.id)
    await receiver.waitForHooks(3, 10_000)
    assert.is(receiver.answered, 0, 'the 3 POSTs are in flight')

    group.signal('SIGTERM')
    assert.is(await group.exited, 0, group.output())
    await group.gone()

    server = await startStandalone(env)
    // A released event is due at once: the restarted server would send it within a second or two.
    await waitFor(() => server!.output().includes('devices resumed'), 30_000, 'the restarted server to resume its devices')
    await new Promise(resolve => setTimeout(resolve, 3_000))
    const delivered = receiver.hooks.map(hook => hook.payload.idMessagem as string)
    assert.equal(delivered.sort(), [...ids].sort(), `each event once: ${delivered.length} deliveries`)
    assert.is(receiver.answered, 3)
  } finally {
    await group?.kill()
    await server?.kill('SIGKILL')
    await receiver?.stop()
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
