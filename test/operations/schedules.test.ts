import assert from 'node:assert/strict'
import { suite } from 'uvu'
import type { IncomingMessage } from '../../src/ports/transport.ts'
import { formatWallClock } from '../../src/domain/messaging/schedule-time.ts'
import { fileServer } from '../helpers/file-server.ts'
import { waitFor } from '../helpers/gateway.ts'
import { DEVICE_PHONE, FRIEND, OTHER, assertError, assertOk, inbox, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'
import { PNG } from '../helpers/samples.ts'
import { internalsOf } from '../../src/internals.ts'

const test = suite<{ g: SendingGateway }>('scheduling (agendamento) and operation 17: list scheduled messages')

test.after.each(async ctx => {
  await ctx.g?.stop()
})

/** The wall-clock text, in `zone`, of the next whole second at least `ms` from now. */
function inAbout(ms: number, zone = 'UTC'): string {
  return formatWallClock(Math.ceil((Date.now() + ms) / 1000) * 1000, zone)
}

const list = (g: SendingGateway, extra: Record<string, unknown> = {}) => g.send({ listaAgendamento: 'true', message: 'false', ...extra })

test('a scheduled text answers its id and agendamento, waits, then is sent exactly once when due', async ctx => {
  const g = (ctx.g = await sendingGateway())
  const seen: IncomingMessage[] = []
  g.t.gateway.events.on('message', ({ message }) => seen.push(message))
  const agendamento = inAbout(1500)
  const body = assertOk(await g.send({ to: `+${FRIEND}`, message: 'Lembrete', agendamento }))
  assert.deepEqual(body, { status: 200, message: 'Mensagem agendada.', id: body.id, agendamento })
  assert.deepEqual(g.network.inbox(FRIEND), [])
  assert.deepEqual(assertOk(await list(g)).data, [{ id: body.id, to: FRIEND, message: 'Lembrete', agendamento, situacao: 'pendente' }])
  await waitFor(() => g.network.inbox(FRIEND).length > 0, 5000, 'the scheduled send')
  await new Promise(resolve => setTimeout(resolve, 300))
  const [entry] = inbox(g.network, FRIEND)
  assert.deepEqual({ ...entry, id: 'ID' }, { id: 'ID', from: DEVICE_PHONE, type: 'text', text: 'Lembrete' })
  assert.equal(g.network.inbox(FRIEND).length, 1)
  assert.deepEqual(assertOk(await list(g)), { status: 200, message: 'Nenhum agendamento encontrado.', data: [] })
  assert.equal(seen.filter(m => m.fromMe && m.content.kind === 'text').length, 1)
})

test('agendamento is a wall-clock time in the timeZone option', async ctx => {
  const g = (ctx.g = await sendingGateway({ timeZone: 'America/Sao_Paulo' }))
  const local = inAbout(1500, 'America/Sao_Paulo')
  const utcText = inAbout(1500, 'UTC')
  assertOk(await g.send({ to: FRIEND, message: 'em São Paulo', agendamento: local }))
  // The UTC wall-clock text of the same instant is three hours later in São Paulo.
  assertOk(await g.send({ to: FRIEND, message: 'três horas depois', agendamento: utcText }))
  await waitFor(() => g.network.inbox(FRIEND).length > 0, 5000, 'the scheduled send')
  await new Promise(resolve => setTimeout(resolve, 500))
  assert.deepEqual(
    g.network.inbox(FRIEND).map(e => (e as { text: string }).text),
    ['em São Paulo'],
  )
  assert.deepEqual(
    assertOk(await list(g)).data.map((i: { message: string }) => i.message),
    ['três horas depois'],
  )
})

test('every send operation accepts agendamento, and the listing shows each item by its text', async ctx => {
  const files = await fileServer({ '/a.png': { body: PNG, type: 'image/png' } })
  const g = (ctx.g = await sendingGateway({ allowPrivateUrls: true }))
  const received = await g.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'oi' })
  const agendamento = formatWallClock(Date.now() + 86_400_000, 'UTC')
  const requests: [Record<string, unknown>, string][] = [
    [{ message: 'texto' }, 'texto'],
    [{ file: PNG.toString('base64'), message: 'foto.png', descricao: 'legenda' }, 'legenda'],
    [{ contact: 'Ana', message: OTHER }, 'Ana'],
    [{ latitude: '-23.5', longitude: '-46.6' }, '-23.5,-46.6'],
    [{ reactionMessage: 'true', message: '👍', id: received }, '👍'],
    [{ message: 'false', deleteID: received }, received],
    [{ markRead: received }, received],
    [{ message: 'botões', buttons: [{ type: 'replyButton', displaytext: 'Sim' }] }, 'botões'],
    [
      {
        message: 'carrossel',
        cards: [{ image_url: `${files.url}/a.png`, title: 'A', buttons: [{ type: 'quickReplyButton', displaytext: 'Quero', id: 'q' }] }],
      },
      'carrossel',
    ],
  ]
  const ids: string[] = []
  for (const [request] of requests) {
    const body = assertOk(await g.send({ to: FRIEND, agendamento, ...request }))
    assert.equal(body.message, 'Mensagem agendada.')
    assert.equal(body.agendamento, agendamento)
    ids.push(body.id)
  }
  await files.stop()
  const data = assertOk(await list(g)).data as { id: string; message: string }[]
  assert.deepEqual(new Set(data.map(i => i.id)), new Set(ids))
  assert.deepEqual(data.map(i => i.message).sort(), requests.map(([, text]) => text).sort())
  assert.deepEqual(g.network.inbox(FRIEND), [])
})

test('a scheduled media and carousel keep their bytes (fetched when scheduled) and go out when due', async ctx => {
  const files = await fileServer({ '/a.png': { body: PNG, type: 'image/png' } })
  const g = (ctx.g = await sendingGateway({ allowPrivateUrls: true }))
  const agendamento = inAbout(1500)
  assertOk(await g.send({ to: FRIEND, file: PNG.toString('base64'), message: 'foto.png', agendamento }))
  const card = { image_url: `${files.url}/a.png`, title: 'A', buttons: [{ type: 'quickReplyButton', displaytext: 'Quero', id: 'q' }] }
  assertOk(await g.send({ to: FRIEND, message: 'ofertas', cards: [card], agendamento }))
  await files.stop()
  await waitFor(() => g.network.inbox(FRIEND).length === 2, 5000, 'the scheduled sends')
  const [media, carousel] = inbox(g.network, FRIEND) as any[]
  assert.deepEqual({ type: media.type, bytes: media.bytes, fileName: media.fileName }, { type: 'image', bytes: PNG.length, fileName: 'foto.png' })
  assert.deepEqual(carousel.cards[0].image, { mimetype: 'image/png', fileName: 'a.png', bytes: PNG.length })
})

test('an agendamento in the past (beyond the 30 s clock allowance), impossible, malformed or over a year ahead is 401 validation.required', async ctx => {
  const g = (ctx.g = await sendingGateway())
  const year = new Date().getUTCFullYear()
  const bad = [
    '2020-01-01 10:00:00',
    formatWallClock(Date.now() - 35_000, 'UTC'),
    `${year + 1}-02-30 10:00:00`,
    `${year + 1}-04-31 10:00:00`,
    `${year + 1}-13-01 10:00:00`,
    `${year + 1}-01-01 24:00:00`,
    `${year + 1}-01-01 10:60:00`,
    `${year + 1}-1-5 10:00:00`,
    'amanhã às 10h',
    `${year + 2}-12-31 10:00:00`,
  ]
  for (const agendamento of bad) assertError(await g.send({ to: FRIEND, message: 'x', agendamento }), 401, 'validation.required')
  // A time a few seconds past may be "now" by the client's clock or another instance's: taken, sent at once.
  const justPast = assertOk(await g.send({ to: FRIEND, message: 'agora pelo relógio do cliente', agendamento: formatWallClock(Date.now() - 20_000, 'UTC') }))
  await waitFor(() => inbox(g.network, FRIEND).some(m => m.text === 'agora pelo relógio do cliente'), 10_000, 'the just-past schedule to be sent')
  assert.ok(justPast.agendamento)
  assertOk(await g.send({ to: FRIEND, message: 'sem segundos', agendamento: formatWallClock(Date.now() + 86_400_000, 'UTC').slice(0, 16) }))
  assert.equal(assertOk(await list(g)).data[0].agendamento.length, 19)
})

test('listing answers 401 for a missing field or unknown authkey, 404 for another account, and shows only that device', async ctx => {
  const g = (ctx.g = await sendingGateway())
  const agendamento = formatWallClock(Date.now() + 86_400_000, 'UTC')
  await g.t.addDevice(g.authkey, 'segunda')
  assertOk(await g.send({ appkey: 'segunda', to: FRIEND, message: 'da segunda', agendamento }))
  assertOk(await g.send({ to: FRIEND, message: 'da loja', agendamento }))
  assert.deepEqual(
    assertOk(await list(g)).data.map((i: { message: string }) => i.message),
    ['da loja'],
  )
  assert.deepEqual(
    assertOk(await list(g, { appkey: 'segunda' })).data.map((i: { message: string }) => i.message),
    ['da segunda'],
  )
  assertError(await g.send({ listaAgendamento: 'true' }), 401, 'validation.required')
  assertError(await list(g, { message: 'true' }), 401, 'validation.required')
  assertError(await list(g, { appkey: undefined }), 401, 'validation.required')
  assertError(await list(g, { authkey: 'nope' }), 401, 'validation.required')
  const other = await g.t.register()
  const { appkey } = await g.t.addDevice(other.authkey, 'outra')
  assertError(await list(g, { appkey }), 404, 'Nenhum dispositivo encontrado.')
  assertError(await list(g, { appkey: 'segunda', authkey: other.authkey }), 404, 'Nenhum dispositivo encontrado.')
})

test('a scheduled send due while the device is away goes out as soon as it connects again', async ctx => {
  const g = (ctx.g = await sendingGateway())
  assertOk(await g.send({ to: FRIEND, message: 'quando voltar', agendamento: inAbout(1000) }))
  await g.network.unlink(g.deviceId)
  await new Promise(resolve => setTimeout(resolve, 1800))
  assert.deepEqual(g.network.inbox(FRIEND), [])
  assert.equal(assertOk(await list(g)).data[0].situacao, 'pendente')
  await g.t.addDevice(g.authkey, 'loja')
  await g.network.scan({ deviceId: g.deviceId }, DEVICE_PHONE)
  await waitFor(() => g.network.inbox(FRIEND).length === 1, 3000, 'the send after reconnecting')
})

test('a scheduled send that keeps failing is retried, then listed as falhou and never sent', async ctx => {
  const g = (ctx.g = await sendingGateway({ scheduleRetryMs: [100, 100] }))
  const attempts: number[] = []
  g.network.onMessage(() => attempts.push(Date.now()))
  g.network.setFault(g.deviceId, 'fail')
  const body = assertOk(await g.send({ to: FRIEND, message: 'falha', agendamento: inAbout(800) }))
  await waitFor(async () => assertOk(await list(g)).data[0]?.situacao === 'falhou', 5000, 'the item to fail')
  g.network.setFault(g.deviceId, null)
  await new Promise(resolve => setTimeout(resolve, 400))
  assert.deepEqual(g.network.inbox(FRIEND), [])
  const [item] = assertOk(await list(g)).data
  assert.deepEqual(item, { id: body.id, to: FRIEND, message: 'falha', agendamento: item.agendamento, situacao: 'falhou' })
})

test('a scheduled send that fails once is retried and sent once', async ctx => {
  const g = (ctx.g = await sendingGateway({ scheduleRetryMs: [300] }))
  g.network.setFault(g.deviceId, 'rate-limit')
  assertOk(await g.send({ to: FRIEND, message: 'de novo', agendamento: inAbout(500) }))
  await waitFor(
    async () => (await internalsOf(g.t.gateway).storage.get<{ attempts: number }>(await firstScheduleKey(g)))?.attempts === 1,
    4000,
    'a failed attempt',
  )
  g.network.setFault(g.deviceId, null)
  await waitFor(() => g.network.inbox(FRIEND).length === 1, 3000, 'the retry')
  await new Promise(resolve => setTimeout(resolve, 400))
  assert.equal(g.network.inbox(FRIEND).length, 1)
})

test('deleting the device drops its scheduled messages', async ctx => {
  const g = (ctx.g = await sendingGateway())
  assertOk(await g.send({ to: FRIEND, file: PNG.toString('base64'), agendamento: inAbout(1200) }))
  assertOk(await g.t.post('/api/developer', { authkey: g.authkey, message: 'loja', apagarDispositivo: 'true' }))
  const keys: string[] = []
  for await (const [key] of internalsOf(g.t.gateway).storage.list('schedule')) keys.push(key)
  assert.deepEqual(keys, [])
  await new Promise(resolve => setTimeout(resolve, 1800))
  assert.deepEqual(g.network.inbox(FRIEND), [])
})

test('a due item is sent once however many times the scheduler is woken', async ctx => {
  const g = (ctx.g = await sendingGateway())
  assertOk(await g.send({ to: FRIEND, message: 'uma vez', agendamento: inAbout(1000) }))
  const scheduler = internalsOf(g.t.gateway).messaging.scheduler
  const stop = Date.now() + 2000
  while (Date.now() < stop) {
    for (let i = 0; i < 5; i++) scheduler.wake(g.deviceId)
    await new Promise(resolve => setTimeout(resolve, 5))
  }
  await new Promise(resolve => setTimeout(resolve, 300))
  assert.equal(g.network.inbox(FRIEND).length, 1)
})

test.run()

// --- Internal helpers ---

async function firstScheduleKey(g: SendingGateway): Promise<string> {
  for await (const [key] of internalsOf(g.t.gateway).storage.list('schedule:')) return key
  return 'none'
}
