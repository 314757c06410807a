import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../adapters/transport-memory/index.ts'
import { startGateway } from '../helpers/gateway.ts'

/**
 * Two deletions of one device at once (operation 6 twice: a client's retry, two admins): the first
 * deletes it, the second, which found the device before the first ended and waited for it, answers
 * 404 as any deletion of a device that is gone (the spec's "no device found"), not 200 for nothing.
 */
const test = suite('operation 6 twice at once')

test('the second of two concurrent deletions answers 404, the first 200', async () => {
  const network = new MemoryNetwork()
  const transport = memoryTransport({ network })
  let release: (() => void) | undefined
  const logout = transport.logout.bind(transport)
  transport.logout = async (deviceId: string) => (release && (await new Promise<void>(resolve => (release = resolve))), logout(deviceId))
  release = () => {}
  const t = await startGateway({ rateLimit: false, network, transport })
  try {
    const { authkey } = await t.register()
    await t.addDevice(authkey, 'loja')
    const deletion = (extra: Record<string, unknown> = {}) => t.post('/api/developer', { authkey, message: 'loja', apagarDispositivo: 'true', ...extra })
    const first = deletion()
    await new Promise(resolve => setTimeout(resolve, 100)) // the first holds the device's lock, its logout waiting
    const second = deletion({ apagarAppkey: 'true' })
    await new Promise(resolve => setTimeout(resolve, 100)) // the second found the device and waits for the lock
    release!()
    release = undefined
    const [a, b] = await Promise.all([first, second])
    assert.equal([a.status, a.body.message], [200, 'Dispositivo excluído com sucesso.'])
    assert.equal([b.status, b.body.message], [404, 'Nenhum dispositivo encontrado.'])
  } finally {
    await t.stop()
  }
})

test.run()
