import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { freePort, tempDir } from '../helpers/standalone.ts'
import { startNpmGroup, type NpmGroup } from '../helpers/npm-group.ts'
import { post } from '../helpers/http.ts'
import { waitFor } from '../helpers/gateway.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

/**
 * Issue 27.1: a supervisor that restarts `npm start` at once after the whole group was SIGKILLed (a
 * crash, an OOM kill). The killed server may still be a zombie, or not yet reaped, when the new one
 * starts: the new one must not take it for a live owner of the SQLite store.
 */
const test = suite('npm start: restarted at once after SIGKILL to its process group')

const DEVICE_PHONE = '5511999990001'
const FRIEND = '5511988880002'

test('20 webhooks waiting for a receiver that is down: the group SIGKILLed, npm start again at once, the receiver up: 20 of 20 delivered', async () => {
  const dir = tempDir()
  const receiverPort = await freePort()
  const env = {
    GATEWAY_TRANSPORT: 'memory',
    GATEWAY_STORE: `sqlite://${join(dir, 'gateway.sqlite')}`,
    GATEWAY_ALLOW_PRIVATE_URLS: '1',
    GATEWAY_WEBHOOK_RETRY_MS: '100,300',
  }
  let server: NpmGroup | undefined
  let receiver: Receiver | undefined
  try {
    server = await startNpmGroup(env)
    const api = (path: string, body: Record<string, unknown>) => post(server!.url + path, body)
    const authkey = (
      await api('/api/auth', { auth: 'registrar', nome: 'Ana', email: 'ana@example.com', senha: 'segredo1', telefone: '5511900000000', plano: '1' })
    ).body.data.authkey
    const created = await api('/api/v2/qrcode', { authkey, setAppkey: 'sobrevivente', webhook: `http://127.0.0.1:${receiverPort}/hook` })
    assert.is(created.status, 200, created.text)
    assert.is((await api('/_sim/scan', { authkey, appkey: 'sobrevivente', phone: DEVICE_PHONE })).status, 200)
    const ids: string[] = []
    for (let i = 0; i < 20; i++) {
      const sent = await api('/_sim/send', { from: FRIEND, to: DEVICE_PHONE, type: 'text', text: `evento ${i}` })
      assert.is(sent.status, 200, sent.text)
      ids.push(sent.body.id)
    }

    server.signal('SIGKILL')
    assert.is(await server.exited, null, 'npm was killed')
    // At once: the killed server may not be reaped yet (a zombie).
    const first = server
    const stateAtRestart = processState(first.serverPid)
    server = undefined
    server = await startNpmGroup(env).catch(err => {
      throw new Error(`the restart was refused: ${String(err).slice(0, 600)}`)
    })
    await first.gone()
    receiver = await startReceiver(undefined, receiverPort)
    await waitFor(() => new Set(receiver!.hooks.map(h => JSON.parse(h.body).idMessagem)).size === 20, 20_000, 'all 20 events')
    const payloads = receiver.verified(created.body.webhookSecret)
    assert.equal([...new Set(payloads.map(p => p.idMessagem))].sort(), [...ids].sort())
    console.log(
      `# group SIGKILL, npm start again at once (the killed server was ${stateAtRestart}): ${new Set(payloads.map(p => p.idMessagem)).size} of 20 webhooks delivered`,
    )
  } finally {
    await server?.kill()
    await receiver?.stop()
    rmSync(dir, { recursive: true, force: true })
  }
})

test("a second npm start on the same SQLite store while the first runs: it waits for the first one's heartbeat, sees it move, and refuses", async () => {
  const dir = tempDir()
  const env = { GATEWAY_TRANSPORT: 'memory', GATEWAY_STORE: `sqlite://${join(dir, 'gateway.sqlite')}` }
  const first = await startNpmGroup(env)
  try {
    const refusal = await startNpmGroup(env).then(
      async second => (await second.kill(), 'started'),
      err => String(err),
    )
    assert.match(refusal, /waiting for its heartbeat to lapse/)
    assert.match(refusal, /Another gateway process \(.*\) uses this store, which is for one process at a time/)
    assert.is((await post(`${first.url}/api/auth`, {})).status, 401, 'the first one still serves')
  } finally {
    await first.kill()
    rmSync(dir, { recursive: true, force: true })
  }
})

/** The state letter of `/proc/<pid>/stat` (Z: a zombie), or `gone`; `unknown` without /proc. */
function processState(pid: number): string {
  if (!existsSync('/proc/self/stat')) return 'unknown'
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return `in state ${stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]}`
  } catch {
    return 'gone'
  }
}

test.run()
