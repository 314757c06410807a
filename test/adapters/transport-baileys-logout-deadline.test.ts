import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { silentLogger } from '../../src/logger.ts'
import { baileysTransport } from '../../adapters/transport-baileys/index.ts'
import { FakeBaileys } from '../helpers/fake-baileys/index.ts'
import { connectedBaileysDevice } from '../helpers/baileys-gateway.ts'
import { startGateway, waitFor } from '../helpers/gateway.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'

/**
 * Operation 6 of a linked device that is reconnecting, when the gateway's deadline for the logout
 * (`sendTimeoutMs`) passes before the transport's own wait for the socket (`openTimeoutMs`) ends:
 * the gateway answers 500 and keeps the device, so the transport must not unlink it and delete its
 * credentials afterwards. Before, the Baileys logout ran on past the gateway's answer, unlinked the
 * device once its socket opened and deleted its credentials: a device record whose keys were gone.
 */
const test = suite('Baileys transport behind the gateway: a deletion past the gateway deadline')

test('a deletion the gateway gave up on (500, device kept) does not unlink the device later', async () => {
  const fake = new FakeBaileys()
  const storage = new RecordingStorage()
  const transport = baileysTransport({ ...fake.transportOptions(), openTimeoutMs: 20_000, reconnect: { initialDelayMs: 5, maxDelayMs: 40, jitter: 0 } })
  const t = await startGateway({ transport, storage, logger: silentLogger, sendTimeoutMs: 300 })
  try {
    const { authkey } = await t.register()
    const device = await connectedBaileysDevice(t, fake, authkey)
    const creds = `transport:device:${device.id}:auth:creds`
    assert.equal(storage.keys(creds), [creds])
    fake.behaviour.autoOpen = false // the next socket stays connecting until the test opens it
    const before = fake.socketsOf(device.id).length
    await fake.current(device.id).close(428)
    await waitFor(() => transport.statusNow(device.id)?.state === 'connecting', 5_000, 'connecting')

    const answer = await t.post('/api/developer', { authkey, message: 'loja', apagarDispositivo: 'true' })
    assert.is(answer.status, 500, answer.text)
    assert.is(answer.body.message, 'Ocorreu um erro ao excluir o dispositivo.')

    await waitFor(() => fake.socketsOf(device.id).length > before, 5_000, 'a new socket')
    fake.latest(device.id)!.open() // WhatsApp answers again, after the gateway answered
    await transport.connect(device.id) // runs after any logout still holding the device
    assert.ok(
      fake.socketsOf(device.id).every(socket => !socket.calls.some(c => c.method === 'logout')),
      'not unlinked after the gateway answered that the device is kept',
    )
    assert.equal(storage.keys(creds), [creds], 'the kept device keeps its credentials')
    await waitFor(() => transport.statusNow(device.id)?.state === 'open', 5_000, 'open again')
    const status = await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })
    assert.is(status.status, 200, status.text)
  } finally {
    await t.stop()
  }
})

test('an unlink still unanswered at the gateway deadline is given up: the device stays whole', async () => {
  const fake = new FakeBaileys()
  const storage = new RecordingStorage()
  const transport = baileysTransport({ ...fake.transportOptions(), reconnect: { initialDelayMs: 5, maxDelayMs: 40, jitter: 0 } })
  const t = await startGateway({ transport, storage, logger: silentLogger, sendTimeoutMs: 300 })
  try {
    const { authkey } = await t.register()
    const device = await connectedBaileysDevice(t, fake, authkey)
    const creds = `transport:device:${device.id}:auth:creds`
    const socket = fake.current(device.id)
    let answer!: () => void
    const unlink = socket.logout.bind(socket)
    socket.logout = async (msg?: string) => (await new Promise<void>(resolve => (answer = resolve)), unlink(msg)) // WhatsApp answers late

    const deletion = await t.post('/api/developer', { authkey, message: 'loja', apagarDispositivo: 'true' })
    assert.is(deletion.status, 500, deletion.text)
    answer() // the unlink's answer, after the gateway answered
    await transport.connect(device.id) // runs after any logout still holding the device
    assert.equal(storage.keys(creds), [creds], 'the kept device keeps its credentials')
    await waitFor(() => transport.statusNow(device.id)?.state === 'open', 5_000, 'open again')
    const status = await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })
    assert.is(status.body.dispositivo?.conectado, true, status.text)
  } finally {
    await t.stop()
  }
})

test.run()
