import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startGateway } from '../helpers/gateway.ts'
import { internalsOf } from '../../src/internals.ts'

/**
 * Operation 3 or 4 of a device while operation 6 is deleting it (its network logout not answered
 * yet): the link waits for the deletion and answers 404 `Erro ao adicionar dispositivo.`, the
 * spec's exact message (before, an English reason was appended to it in parentheses: "Erro ao
 * adicionar dispositivo. (a deletion of the device cut short could not be finished)").
 */
const test = suite('operations 3 and 4 during a deletion')

for (const [operation, path, body] of [
  ['operation 3', '/api/v2/qrcode', { setAppkey: 'loja' }],
  ['operation 4', '/api/developer', { message: 'loja', conecteQR: 'true' }],
] as const) {
  test(`${operation} while the device is deleted answers the spec's 404 message, nothing appended`, async () => {
    const t = await startGateway()
    try {
      const { authkey } = await t.register()
      await t.addDevice(authkey, 'loja')
      const transport = internalsOf(t.gateway).transport
      const logout = transport.logout.bind(transport)
      let release!: () => void
      let entered!: () => void
      const [gate, inLogout] = [new Promise<void>(r => (release = r)), new Promise<void>(r => (entered = r))]
      Object.assign(transport, { logout: async (...args: Parameters<typeof logout>) => (entered(), await gate, logout(...args)) })
      const deleting = t.post('/api/developer', { authkey, message: 'loja', apagarDispositivo: 'true' })
      await inLogout
      const linking = t.post(path, { authkey, ...body })
      await new Promise(resolve => setTimeout(resolve, 100))
      release()
      assert.is((await deleting).status, 200)
      const answer = await linking
      assert.is(answer.status, 404, answer.text)
      assert.equal(answer.body, { status: 404, message: 'Erro ao adicionar dispositivo.' })
    } finally {
      await t.stop()
    }
  })
}

test.run()
