import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import type { Storage } from '../../src/index.ts'
import { internalsOf } from '../../src/internals.ts'
import { startGateway, waitFor, type TestGateway } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'
import { startReceiver } from '../helpers/receiver.ts'
import { killRedis, REDIS_SERVER, startRedis } from '../helpers/redis-server.ts'
import { needing } from '../helpers/requires.ts'
import { freePort, tempDir } from '../helpers/standalone.ts'

/**
 * A store that hangs (its Redis stopped with SIGSTOP, so every call waits for an answer that does not
 * come): requests that need it answer 503 within the store time-out, and messages that arrive meanwhile
 * are kept and turned into webhooks once it answers again, each once.
 */
const test = suite('a hung store while messages arrive')

const DEVICE_PHONE = '5511999990001'
const OUTAGE_MS = 20_000

const withRedis = needing(test, REDIS_SERVER, 'the hung-store test')

withRedis(
  '50 messages arriving while the store hangs for 20 s become 50 webhooks once it answers, none twice; a request needing the store answers 503 within 2 s',
  async () => {
    const port = await freePort()
    const redis = await startRedis(port, tempDir('zapgate-hung-'))
    const receiver = await startReceiver()
    let storage: Storage | undefined
    let t: TestGateway | undefined
    try {
      storage = await storageFromUrl(`redis://127.0.0.1:${port}`)
      t = await startGateway({ storage, allowPrivateUrls: true, spillDir: tempDir('zapgate-spill-'), rateLimit: false })
      const { authkey } = await t.register()
      const device = await t.linkedDevice(authkey, 'loja', DEVICE_PHONE, { webhook: receiver.url })
      const cold = await t.register()

      redis.kill('SIGSTOP')
      const stoppedAt = Date.now()
      // Past the record cache (2 s), so every message needs the store.
      await new Promise(resolve => setTimeout(resolve, 2_500))
      const asked = Date.now()
      const refused = await request(`${t.url}/api/developer`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ authkey: cold.authkey, message: 'loja', checkDispositivo: 'true' }),
        signal: AbortSignal.timeout(20_000),
      })
      const waited = Date.now() - asked
      assert.equal(refused.body, { status: 503, message: 'Armazenamento indisponível. Tente novamente mais tarde.' })
      // The store hangs for 20 s: a request that waited for it would take that long. (At 2 s, the guard's time-out.)
      assert.ok(waited < 12_000, `answered 503 after ${waited} ms`)

      const sent: string[] = []
      for (let i = 0; i < 50; i++)
        sent.push(await t.network.sendFromPhone(`55119888800${String(i).padStart(2, '0')}`, DEVICE_PHONE, { type: 'text', text: `mensagem ${i}` }))
      await waitFor(() => internalWaiting(t!) > 0, 10_000, 'incoming events to wait for the store')
      await new Promise(resolve => setTimeout(resolve, Math.max(0, OUTAGE_MS - (Date.now() - stoppedAt))))
      assert.is(receiver.hooks.length, 0, 'no webhook while the store hangs')

      redis.kill('SIGCONT')
      const hooks = await receiver.waitForHooks(50, 60_000)
      await new Promise(resolve => setTimeout(resolve, 1_000)) // a duplicate would show up here
      const ids = receiver.hooks.map(hook => hook.payload.idMessagem as string)
      assert.is(ids.length, 50, `${ids.length} webhooks`)
      assert.equal([...new Set(ids)].sort(), [...sent].sort())
      assert.equal(hooks.map(hook => hook.payload.text).sort(), sent.map((_, i) => `mensagem ${i}`).sort(), 'each with its text')
      assert.is(hooks[0]!.payload.device, device.id)
    } finally {
      redis.kill('SIGCONT')
      await t?.stop()
      await storage?.close?.()
      await killRedis(redis)
      await receiver.stop()
    }
  },
)

/** Incoming events waiting for the store (the wiring's buffer). */
function internalWaiting(t: TestGateway): number {
  return internalsOf(t.gateway).incoming.size
}

test.run()
