import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { randomBytes } from 'node:crypto'
import { PNG } from 'pngjs'
import jsQR from 'jsqr'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { startStandalone, type StandaloneServer } from '../helpers/standalone.ts'
import { startSimulator, type SimulatorProcess } from '../helpers/simulator.ts'
import { post, request } from '../helpers/http.ts'
import { waitFor } from '../helpers/gateway.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

/**
 * `npm run sim` (examples/simulator.ts) and two standalone gateways joined to it with
 * GATEWAY_SIM_URL, sharing one Redis store: every one a process of its own.
 */
const test = suite('simulator server: gateway processes share one network')

const DEVICE_PHONE = '5511999990001'
const FRIEND = '5511988880002'

const redisUrl = process.env.REDIS_URL
if (!redisUrl) console.log('skipped: gateway processes sharing the simulator server (REDIS_URL not set)')
else {
  test('a device linked through gateway A is resumed by gateway B, A is replaced, and traffic flows through B', async () => {
    const namespace = `zapgate-sim-${randomBytes(4).toString('hex')}`
    let sim: SimulatorProcess | undefined
    let a: StandaloneServer | undefined
    let b: StandaloneServer | undefined
    let receiver: Receiver | undefined
    try {
      sim = await startSimulator()
      receiver = await startReceiver()
      const env = { GATEWAY_SIM_URL: sim.url, GATEWAY_STORE: redisUrl, GATEWAY_STORE_NAMESPACE: namespace, GATEWAY_ALLOW_PRIVATE_URLS: '1', GATEWAY_RATE_LIMIT: 'off' }
      a = await startStandalone(env)
      const onA = (path: string, body: Record<string, unknown>) => post(a!.url + path, body)
      assert.is((await request(`${a.url}/_sim/stats`)).status, 404, 'a gateway joined to a simulator server mounts no /_sim routes')

      const registered = await onA('/api/auth', { auth: 'registrar', nome: 'Ana', email: `ana.${namespace}@example.com`, senha: 'segredo1', telefone: '5511900000000', plano: '1' })
      const authkey = registered.body.data.authkey
      const created = await onA('/api/v2/qrcode', { authkey, setAppkey: 'loja', webhook: `${receiver.url}/hook` })
      assert.is(created.status, 200, created.text)
      const byAppkey = await post(`${sim.url}/_sim/scan`, { authkey, appkey: 'loja', phone: DEVICE_PHONE })
      assert.is(byAppkey.status, 400)
      assert.match(byAppkey.body.message, /scan by \{code, phone\}/)
      const scanned = await post(`${sim.url}/_sim/scan`, { qr: qrText(created.body.qrcode), phone: DEVICE_PHONE })
      assert.is(scanned.status, 200, scanned.text)
      const state = async (gateway: StandaloneServer) => (await post(gateway.url + '/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })).body?.dispositivo
      assert.is((await state(a)).estado, 'open', 'the scan answers once the device is open')
      assert.equal(await sim.stats(), { connections: 1, replaced: 0, sent: 0, received: 0 })

      b = await startStandalone(env) // resumes the linked device with the credentials A stored
      await waitFor(async () => (await state(b!)).estado === 'open', 30_000, 'B to resume the device')
      await waitFor(async () => (await state(a!)).estado === 'replaced', 30_000, 'A to show replaced')
      assert.is((await state(a)).conectado, false)
      assert.equal(await sim.stats(), { connections: 1, replaced: 1, sent: 0, received: 0 })

      const refused = await onA('/api/create-message', { appkey: 'loja', authkey, to: FRIEND, message: 'via A' })
      assert.is(refused.status, 409, refused.text)
      const sent = await post(b.url + '/api/create-message', { appkey: 'loja', authkey, to: FRIEND, message: 'via B' })
      assert.is(sent.status, 200, sent.text)
      const inbox = (await request(`${sim.url}/_sim/inbox/${FRIEND}`)).body as { from: string; text: string }[]
      assert.equal(inbox.map(entry => [entry.from, entry.text]), [[DEVICE_PHONE, 'via B']])

      const incoming = await post(`${sim.url}/_sim/send`, { from: FRIEND, to: DEVICE_PHONE, type: 'text', text: 'oi B' })
      assert.is(incoming.status, 200, incoming.text)
      await waitFor(() => receiver!.hooks.some(hook => hook.payload?.idMessagem === incoming.body.id), 30_000, 'the webhook of the message')
      const hook = receiver.verified(created.body.webhookSecret).find(payload => payload.idMessagem === incoming.body.id)
      assert.equal([hook.event, hook.text, hook.from, hook.fromMe], ['Texto', 'oi B', FRIEND, false])
      assert.equal(await sim.stats(), { connections: 1, replaced: 1, sent: 1, received: 1 })
      assert.is(receiver.hooks.filter(h => h.payload?.idMessagem === incoming.body.id).length, 1, 'one webhook for the message')
      assert.ok(!/"level":50/.test(a.output() + b.output() + sim.output()), 'no error logged')
    } finally {
      await a?.kill('SIGKILL')
      await b?.kill('SIGKILL')
      await sim?.kill('SIGKILL')
      await receiver?.stop()
      const store = await storageFromUrl(redisUrl!, { namespace })
      for await (const [key] of store.list('')) await store.delete(key)
      await store.close!()
    }
  })
}

test.run()

/** The text of the QR in a `data:image/png;base64,...` URI: what a client scans on the simulator with `{qr, phone}`. */
function qrText(dataUri: string): string {
  const image = PNG.sync.read(Buffer.from(dataUri.slice(dataUri.indexOf(',') + 1), 'base64'))
  const text = jsQR.default(new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.length), image.width, image.height)?.data
  if (!text) throw new Error('no QR in the image')
  return text
}
