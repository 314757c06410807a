import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { rmSync } from 'node:fs'
import { freePort, startStandalone, tempDir, type StandaloneServer } from '../helpers/standalone.ts'
import { post } from '../helpers/http.ts'
import { waitFor } from '../helpers/gateway.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

const test = suite('standalone server: webhooks survive SIGKILL')

const DEVICE_PHONE = '5511999990001'
const FRIEND = '5511988880002'

test('20 events waiting for a receiver that is down are all delivered after a SIGKILL and a restart', async () => {
  const dir = tempDir()
  const receiverPort = await freePort()
  const env = {
    GATEWAY_STORE: `sqlite://${join(dir, 'gateway.sqlite')}`,
    GATEWAY_ALLOW_PRIVATE_URLS: '1',
    GATEWAY_WEBHOOK_RETRY_MS: '100,300',
  }
  let server: StandaloneServer | undefined
  let receiver: Receiver | undefined
  try {
    server = await startStandalone(env)
    const api = (path: string, body: Record<string, unknown>) => post(server!.url + path, body)
    const registered = await api('/api/auth', {
      auth: 'registrar',
      nome: 'Ana',
      email: 'ana@example.com',
      senha: 'segredo1',
      telefone: '5511900000000',
      plano: '1',
    })
    const authkey = registered.body.data.authkey
    const created = await api('/api/v2/qrcode', { authkey, setAppkey: 'sobrevivente', webhook: `http://127.0.0.1:${receiverPort}/hook` })
    assert.is(created.status, 200, created.text)
    const secret = created.body.webhookSecret
    assert.is((await api('/_sim/scan', { authkey, appkey: 'sobrevivente', phone: DEVICE_PHONE })).status, 200)

    const ids: string[] = []
    for (let i = 0; i < 20; i++) {
      const sent = await api('/_sim/send', { from: FRIEND, to: DEVICE_PHONE, type: 'text', text: `evento ${i}` })
      assert.is(sent.status, 200, sent.text)
      ids.push(sent.body.id)
    }
    assert.is(await server.kill('SIGKILL'), null)

    server = await startStandalone(env)
    receiver = await startReceiver(undefined, receiverPort)
    await waitFor(() => new Set(receiver!.hooks.map(h => JSON.parse(h.body).idMessagem)).size === 20, 20_000, 'all 20 events')
    const payloads = receiver.verified(secret)
    assert.equal([...new Set(payloads.map(p => p.idMessagem))].sort(), [...ids].sort())
    assert.equal(new Set(payloads.map(p => p.text)).size, 20)
    const connected = async () =>
      (await post(server!.url + '/api/developer', { authkey, message: 'sobrevivente', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true
    await waitFor(connected, 10_000, 'the device to resume from its stored session')
  } finally {
    await server?.kill('SIGKILL')
    await receiver?.stop()
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
