import assert from 'node:assert/strict'
import { waitFor } from '../gateway.ts'
import { assertError } from '../messaging.ts'
import type { Case } from './suite.ts'
import { SHOP, status, type World } from './world.ts'

/** A second shop phone, linked by pairing code and deleted by operation 6. */
const PAIRED = '5511966660005'

/** Operations 3 to 7: link by QR and by pairing code, add, status, delete, share links. */
export function deviceCases(test: Case): void {
  test('operation 3: the QR the phone scans links the device (its status shows the phone, connected); 401 for an unknown authkey', async world => {
    const shown = await status(world)
    assert.deepEqual(
      { id: shown.id, nome: shown.nome, telefone: shown.telefone, webhook: shown.webhook, conectado: shown.conectado },
      { id: world.deviceId, nome: 'loja', telefone: SHOP, webhook: world.receiver.url, conectado: true },
    )
    const qr = await world.post('/api/v2/qrcode', { authkey: world.authkey, setAppkey: 'outra-loja' })
    assert.equal(qr.status, 200, qr.text)
    assert.match(qr.body.qrcode, /^data:image\/png;base64,[A-Za-z0-9+/=]+$/)
    assert.equal(qr.body.appkey, 'outra-loja')
    assertError(await world.post('/api/v2/qrcode', { authkey: 'not-a-key' }), 401, 'Authkey inválida ou não encontrada.')
  })

  test('operation 3 with phone: an 8-digit pairing code that links the device when that phone enters it', async world => {
    const answer = await world.post('/api/v2/qrcode', { authkey: world.authkey, setAppkey: 'pareado', phone: '+55 11 96666-0005', webhook: world.receiver.url })
    assert.equal(answer.status, 200, answer.text)
    assert.match(answer.body.code, /^[1-9]{8}$/)
    assert.deepEqual([answer.body.appkey, answer.body.qrcode], ['pareado', undefined])
    const wrongPhone = await world.post('/_sim/scan', { code: answer.body.code, phone: '5511955550006' })
    assert.equal(wrongPhone.status === 200, false, `another phone cannot enter the code: ${wrongPhone.text}`)
    const scanned = await world.post('/_sim/scan', { code: answer.body.code, phone: PAIRED })
    assert.deepEqual([scanned.status, scanned.body.message], [200, 'device linked'], scanned.text)
    await waitConnected(world, 'pareado')
    assert.equal((await status(world, 'pareado')).telefone, PAIRED)
  })

  test('operation 4: adds a device that answers a QR, found by name, appkey and id; 401 when conecteQR is not true', async world => {
    const answer = await world.post('/api/developer', { authkey: world.authkey, message: 'recepcao', conecteQR: 'true' })
    assert.equal(answer.status, 200, answer.text)
    assert.match(answer.body.qrcode, /^data:image\/png;base64,/)
    for (const ref of [answer.body.appkey, 'recepcao', answer.body.id]) assert.equal((await status(world, ref)).id, answer.body.id)
    assert.equal((await status(world, 'recepcao')).conectado, false)
    assertError(await world.post('/api/developer', { authkey: world.authkey, message: 'x', conecteQR: 'false' }), 401, 'validation.required')
  })

  test('operation 5: 404 Nenhum dispositivo encontrado. for an unknown device, 401 for a missing field', async world => {
    assertError(
      await world.post('/api/developer', { authkey: world.authkey, message: 'ghost', checkDispositivo: 'true' }),
      404,
      'Nenhum dispositivo encontrado.',
    )
    assertError(await world.post('/api/developer', { authkey: world.authkey, checkDispositivo: 'true' }), 401, 'validation.required')
  })

  test('operation 6: deleting a linked device logs it out of the network (one connection less) and removes it; 401 Authkey Invalida', async world => {
    const before = await connections(world)
    const answer = await world.post('/api/developer', { authkey: world.authkey, message: 'pareado', apagarDispositivo: 'true' })
    assert.deepEqual([answer.status, answer.body.message], [200, 'Dispositivo excluído com sucesso.'], answer.text)
    await waitFor(async () => (await connections(world)) === before - 1, 10_000, 'the connection to close')
    assertError(
      await world.post('/api/developer', { authkey: world.authkey, message: 'pareado', checkDispositivo: 'true' }),
      404,
      'Nenhum dispositivo encontrado.',
    )
    assertError(await world.post('/api/developer', { authkey: 'nope', message: 'x', apagarDispositivo: 'true' }), 401, 'Authkey Invalida')
  })

  test('operation 7: excluir revokes the share link of a device (404 afterwards); 404 for an unknown device', async world => {
    const device = await world.post('/api/v2/qrcode', { authkey: world.authkey, setAppkey: 'vitrine' })
    const link = device.body.link as string
    assert.equal((await fetch(link)).status, 200)
    const answer = await world.post('/api/developer', {
      authkey: world.authkey,
      appkey: 'vitrine',
      message: 'false',
      to: device.body.id,
      GerenciarLinks: 'excluir',
    })
    assert.equal(answer.status, 200, answer.text)
    assert.equal((await fetch(link)).status, 404)
    const unknown = { authkey: world.authkey, appkey: 'ghost', message: 'false', to: 'ghost', GerenciarLinks: 'excluir' }
    assertError(await world.post('/api/developer', unknown), 404, 'Nenhum dispositivo encontrado.')
  })
}

// --- Internal helpers ---

async function connections(world: World): Promise<number> {
  return ((await (await fetch(`${world.url}/_sim/stats`)).json()) as { connections: number }).connections
}

async function waitConnected(world: World, name: string): Promise<void> {
  await waitFor(async () => (await status(world, name)).conectado === true, 10_000, `${name} connected`)
}
