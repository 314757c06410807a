import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startGateway } from '../helpers/gateway.ts'
import { internalsOf } from '../../src/internals.ts'
import { TransportError } from '../../src/ports/transport.ts'

// The Baileys transport's link() on a linked device that is still reconnecting (after a restart: not
// connected yet) waits for it, then throws TransportError('already-connected') once it opens.
// Operation 4 answered that 404 `Erro ao adicionar dispositivo.`; docs/api.md says 409 for a
// connected device, as operation 3 answers.
test('operation 4 for a device that connects while its link waits answers 409 Dispositivo já conectado.', async () => {
  const t = await startGateway()
  try {
    const { authkey } = await t.register()
    const device = await t.addDevice(authkey, 'recepcao')
    const transport = internalsOf(t.gateway).transport
    transport.link = async () => {
      throw new TransportError('already-connected', 'the device connected')
    }
    for (const [path, body] of [
      ['/api/developer', { authkey, message: 'recepcao', conecteQR: 'true' }],
      ['/api/v2/qrcode', { authkey, setAppkey: 'recepcao' }],
    ] as const) {
      const answer = await t.post(path, body)
      assert.is(answer.status, 409, `${path}: ${answer.text}`)
      assert.equal(answer.body, { status: 409, message: 'Dispositivo já conectado.' })
    }
    const status = await t.post('/api/developer', { authkey, message: 'recepcao', checkDispositivo: 'true' })
    assert.is(status.body.dispositivo.id, device.id)
  } finally {
    await t.stop()
  }
})

test.run()
