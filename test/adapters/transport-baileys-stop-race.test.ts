import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { storedDevice } from '../helpers/baileys-setup.ts'
import { FakeBaileys, settle, waitFor } from '../helpers/fake-baileys/index.ts'
import { baileysTransport } from '../../adapters/transport-baileys/index.ts'
import { silentLogger } from '../../src/logger.ts'

const policy = suite('Baileys transport: stop() racing a connect()')

policy('stop() while a connect() is under way opens no socket afterwards (none left open, none reconnecting)', async () => {
  // The transport's stop() takes no device lock: a connect() (a lease holder resuming its devices,
  // start-up) that was reporting `connecting` went on to open a socket after stop(), which nothing closed.
  const storage = await storedDevice()
  const fake = new FakeBaileys()
  let release!: () => void
  const held = new Promise<void>(resolve => (release = resolve))
  let holding = false
  const transport = baileysTransport({ ...fake.transportOptions(), reconnect: { initialDelayMs: 5, maxDelayMs: 40, jitter: 0 } })
  await transport.start({
    storage,
    logger: silentLogger,
    emit: async event => {
      if (event.type === 'status' && event.status.state === 'connecting' && !holding) {
        holding = true
        await held
      }
    },
  })
  const connecting = transport.connect('dev')
  await waitFor(() => holding, 'connect() reporting connecting')
  await transport.stop()
  release()
  await connecting.catch(() => undefined)
  await settle(30)
  const open = fake.socketsOf('dev').filter(socket => !socket.closed)
  assert.is(open.length, 0, `sockets left open after stop(): ${open.length} of ${fake.socketsOf('dev').length}`)
})

policy.run()
