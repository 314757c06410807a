import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startGateway } from '../helpers/gateway.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { internalsOf } from '../../src/internals.ts'
import { request } from '../helpers/http.ts'

/**
 * Operation 6 when the store fails half-way through a deletion (after the device record is gone,
 * before its name or appkey entry is): the answer is 500, and the name and appkey must stay usable.
 * Before, the stale entry held them forever: operation 3 with that setAppkey answered 404 `Erro ao
 * adicionar dispositivo. (the device name was taken but its device is not there)` on every try.
 */
const test = suite('operation 6: a deletion the store cut half-way')

/** A store whose atomic steps on keys containing `failOn` throw while `armed`. */
function faultyStore() {
  const store = memoryStorage()
  const fault = { failOn: '', armed: false }
  const failing = (key: string) => {
    if (fault.armed && key.includes(fault.failOn)) throw new Error('store connection lost')
  }
  const storage = {
    ...store,
    deleteIfEqual: async (key: string, expected: unknown) => (failing(key), store.deleteIfEqual(key, expected)),
    compareAndSet: async (key: string, expected: unknown, next: unknown, ttlMs?: number) => (failing(key), store.compareAndSet(key, expected, next, ttlMs)),
  }
  return { storage, fault }
}

for (const failOn of ['device-name:', 'device-appkey:']) {
  test(`a failed write of the ${failOn.slice(0, -1)} entry leaves the name free for a new device`, async () => {
    const { storage, fault } = faultyStore()
    const t = await startGateway({ storage })
    try {
      const { authkey } = await t.register()
      const first = await t.addDevice(authkey, 'loja')
      Object.assign(fault, { failOn, armed: true })
      const deleted = await t.post('/api/developer', { authkey, message: 'loja', apagarDispositivo: 'true' })
      fault.armed = false
      assert.is(deleted.status, 500)
      assert.is(deleted.body.message, 'Ocorreu um erro ao excluir o dispositivo.')
      const again = await t.post('/api/v2/qrcode', { authkey, setAppkey: 'loja' })
      assert.is(again.status, 200, again.text)
      assert.is(again.body.appkey, 'loja')
      assert.is.not(again.body.id, first.id)
      const status = await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })
      assert.is(status.body.dispositivo?.id, again.body.id)
      const agent = await t.post('/api/v2/ia', { authkey, device: 'loja', agent_name: 'Bia' })
      assert.is(agent.status, 200)
    } finally {
      await t.stop()
    }
  })
}

test('a deletion cut short in its removal hooks (a share link could not be deleted: 500, the record kept, marked removing): the device is not found but by operation 6, and the next link of its name finishes the deletion and makes the device anew', async () => {
  const { t, authkey, first, deleted } = await deletionCutShort()
  try {
    assert.is(deleted.status, 500)
    assert.is(deleted.body.message, 'Ocorreu um erro ao excluir o dispositivo.')
    assert.is((await internalsOf(t.gateway).devices.get(first.id))?.removing, true, 'the record is left marked')
    const status = await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })
    assert.equal([status.status, status.body.message], [404, 'Nenhum dispositivo encontrado.'], 'half deleted: not found')
    const again = await t.post('/api/v2/qrcode', { authkey, setAppkey: 'loja' })
    assert.is(again.status, 200, again.text)
    assert.is.not(again.body.id, first.id, 'a new device, not the half-deleted one linked again')
    assert.is(await internalsOf(t.gateway).devices.get(first.id), undefined, 'the deletion was finished')
    const found = await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })
    assert.is(found.body.dispositivo?.id, again.body.id)
    const agent = await t.post('/api/v2/ia', { authkey, device: 'loja', agent_name: 'Bia' })
    assert.is(agent.status, 200, 'agents take the new device (the half-deleted one refused them)')
  } finally {
    await t.stop()
  }
})

test('operation 6 again finishes a deletion cut short', async () => {
  const { t, authkey, first, deleted } = await deletionCutShort()
  try {
    assert.is(deleted.status, 500)
    const again = await t.post('/api/developer', { authkey, message: 'loja', apagarDispositivo: 'true' })
    assert.equal([again.status, again.body.message], [200, 'Dispositivo excluído com sucesso.'])
    assert.is(await internalsOf(t.gateway).devices.get(first.id), undefined)
  } finally {
    await t.stop()
  }
})

test("a deletion cut short leaves no share link: the device's page answers 404 revoked and takes no lease of the device", async () => {
  const { t, first, deleted } = await deletionCutShort()
  try {
    assert.is(deleted.status, 500)
    const link: string = first.answer.body.link
    const state = await request(`${link}/state`)
    assert.equal([state.status, state.body], [404, { status: 404, message: 'Link inválido, expirado ou excluído.' }])
    const page = await request(link)
    assert.is(page.status, 404)
    assert.match(page.text, 'Link inválido, expirado ou excluído.')
    const health = await request(`${t.url}/health`)
    assert.not.ok(health.body.instance.devices.includes(first.id), 'the page took the lease of a device being deleted')
  } finally {
    await t.stop()
  }
})

/** A gateway whose deletion of device `loja` (with a share link) was cut short in its removal hooks: the share link's delete failed once. */
async function deletionCutShort() {
  const store = memoryStorage()
  let failing = false
  const storage = {
    ...store,
    delete: async (key: string) => {
      if (failing && key.includes('share-link:')) throw new Error('store connection lost')
      return store.delete(key)
    },
  }
  const t = await startGateway({ storage })
  const { authkey } = await t.register()
  const first = await t.addDevice(authkey, 'loja') // with a share link
  failing = true
  const deleted = await t.post('/api/developer', { authkey, message: 'loja', apagarDispositivo: 'true' })
  failing = false
  return { t, authkey, first, deleted }
}

test.run()
