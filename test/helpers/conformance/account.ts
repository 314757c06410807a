import assert from 'node:assert/strict'
import { formatWallClock } from '../../../src/domain/messaging/schedule-time.ts'
import { waitFor } from '../gateway.ts'
import { assertError, assertOk } from '../messaging.ts'
import type { Case } from './suite.ts'
import { FRIEND, hooks, inbox, phoneSends, send, SHOP, type World } from './world.ts'

/** Operations 17 to 20: scheduled messages, OTP, flow conversations, the webhook switches. */
export function accountCases(test: Case): void {
  test('operation 17: a scheduled text is listed as pendente, then sent once when due; 401 for an unknown authkey', async world => {
    const agendamento = formatWallClock(Math.ceil((Date.now() + 1500) / 1000) * 1000, 'UTC')
    const body = assertOk(await send(world, { to: `+${FRIEND}`, message: 'Lembrete', agendamento }))
    assert.deepEqual(body, { status: 200, message: 'Mensagem agendada.', id: body.id, agendamento })
    const listed = assertOk(await send(world, { listaAgendamento: 'true', message: 'false' }))
    assert.deepEqual(listed.data, [{ id: body.id, to: FRIEND, message: 'Lembrete', agendamento, situacao: 'pendente' }])
    await waitFor(async () => (await inbox(world, FRIEND)).some(e => e.text === 'Lembrete'), 15_000, 'the scheduled send')
    await new Promise(resolve => setTimeout(resolve, 300))
    const sent = (await inbox(world, FRIEND)).filter(e => e.text === 'Lembrete')
    assert.deepEqual(
      sent.map(({ id: _id, ...e }) => e),
      [{ from: SHOP, type: 'text', text: 'Lembrete' }],
    )
    assert.deepEqual(assertOk(await send(world, { listaAgendamento: 'true', message: 'false' })), {
      status: 200,
      message: 'Nenhum agendamento encontrado.',
      data: [],
    })
    assertError(await send(world, { authkey: 'nope', listaAgendamento: 'true', message: 'false' }), 401, 'validation.required')
  })

  test('operation 18: the OTP code the phone received verifies once (valid true), then 401 valid false', async world => {
    const body = assertOk(await send(world, { to: `+${FRIEND}`, enviarOTP: 'true' }))
    assert.deepEqual(body, { status: 200, message: 'Código OTP enviado.', id: body.id })
    let text = ''
    await waitFor(async () => !!(text = (await inbox(world, FRIEND)).find(e => e.id === body.id)?.text ?? ''), 15_000, 'the OTP text')
    assert.match(text, /^Seu código de verificação é \d{6}\. Ele expira em 5 minutos\.$/)
    const code = /\d{6}/.exec(text)![0]
    const verify = () => send(world, { to: '+55 11 98888-0002', message: 'false', verificarOTP: code })
    assert.deepEqual(assertOk(await verify()), { status: 200, message: 'OTP válido.', valid: true })
    assertError(await verify(), 401, 'OTP inválido ou expirado.', { valid: false })
  })

  test('operation 19: deleting flow conversations answers how many went; 404 for an appkey of another account', async world => {
    const answer = await world.post('/api/settings', {
      appkey: world.appkey,
      authkey: world.authkey,
      to: 'todos',
      message: 'false',
      deleteConversaFluxo: 'true',
    })
    assert.deepEqual(answer.body, { status: 200, message: 'Conversas excluídas com sucesso.', excluidas: 0 })
    const other = await world.post('/api/settings', { appkey: 'ghost', authkey: world.authkey, to: 'todos', message: 'false', deleteConversaFluxo: 'true' })
    assertError(other, 404, 'Nenhum dispositivo encontrado.')
  })

  test('operation 20: statusWebhook false for chat stops the chat webhooks, true lets them flow again; 401 for an unknown type', async world => {
    const off = await switchWebhook(world, 'chat', false)
    assert.deepEqual(off.body, { status: 200, message: 'Webhook desativado.', webhook: { chat: false, grupo: true } })
    const silent = await phoneSends(world, { from: FRIEND, to: SHOP, type: 'text', text: 'silêncio' })
    await new Promise(resolve => setTimeout(resolve, 500))
    const on = await switchWebhook(world, 'chat', true)
    assert.deepEqual(on.body, { status: 200, message: 'Webhook ativado.', webhook: { chat: true, grupo: true } })
    const heard = await phoneSends(world, { from: FRIEND, to: SHOP, type: 'text', text: 'de volta' })
    const [hook] = await hooks(world, [heard])
    assert.equal(hook.text, 'de volta')
    assert.equal(
      world.receiver.hooks.some(h => h.payload?.idMessagem === silent),
      false,
      'no webhook for the text sent while chat events were off',
    )
    assertError(await switchWebhook(world, 'canal', true), 401, 'validation.required')
  })
}

// --- Internal helpers ---

function switchWebhook(world: World, type: string, on: boolean) {
  return world.post('/api/settings', { appkey: world.appkey, authkey: world.authkey, type, message: world.deviceId, statusWebhook: String(on) })
}
