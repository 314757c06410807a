import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { FRIEND, assertError, assertOk, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'

const test = suite<{ g: SendingGateway }>('sending through the per-device queue over HTTP')

test.after.each(async ctx => {
  ctx.g.network.setFault(ctx.g.deviceId, null)
  await ctx.g.stop()
})

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

test('a send that stalls on the network answers 504 within sendTimeoutMs instead of hanging', async ctx => {
  const g = (ctx.g = await sendingGateway({ sendTimeoutMs: 300 }))
  g.network.setFault(g.deviceId, 'hang')
  const started = Date.now()
  assertError(await g.send({ to: FRIEND, message: 'travada' }), 504, 'O envio não foi concluído a tempo; a mensagem pode não ter sido entregue.')
  // Only the time-out can answer: the hung network never does. When exactly it fires is the send queue's
  // unit test (test/domain/messaging/send-queue.test.ts, on a fake clock); this bound only says "not left hanging".
  assert.ok(Date.now() - started < 10_000, `answered after ${Date.now() - started} ms`)
  g.network.setFault(g.deviceId, null)
  assertOk(await g.send({ to: FRIEND, message: 'depois' }))
})

test('sends of one device go out in the order they arrived, even while the network is slow', async ctx => {
  const g = (ctx.g = await sendingGateway({ sendTimeoutMs: 10_000 }))
  g.network.setFault(g.deviceId, 'hang')
  const answers = []
  for (let i = 1; i <= 8; i++) {
    answers.push(g.send({ to: FRIEND, message: `mensagem ${i}` }))
    await sleep(40)
  }
  g.network.setFault(g.deviceId, null)
  const bodies = (await Promise.all(answers)).map(assertOk)
  const received = g.network.inbox(FRIEND) as { id: string; text: string }[]
  assert.deepEqual(
    received.map(e => e.text),
    Array.from({ length: 8 }, (_, i) => `mensagem ${i + 1}`),
  )
  assert.deepEqual(
    received.map(e => e.id),
    bodies.map(b => b.id),
  )
})

test('minIntervalMs spaces the sends of a device', async ctx => {
  const g = (ctx.g = await sendingGateway({ minIntervalMs: 150 }))
  await Promise.all([1, 2, 3].map(i => g.send({ to: FRIEND, message: `m${i}` }).then(assertOk)))
  const times = g.network.inbox(FRIEND).map(e => e.timestamp)
  assert.equal(times.length, 3)
  for (let i = 1; i < times.length; i++) assert.ok(times[i] - times[i - 1] >= 140, `gap ${times[i] - times[i - 1]}`)
})

test('a network rate limit answers 429 with Retry-After, a network timeout 504', async ctx => {
  const g = (ctx.g = await sendingGateway())
  g.network.setFault(g.deviceId, 'rate-limit')
  const limited = await g.send({ to: FRIEND, message: 'x' })
  assertError(limited, 429, 'Muitas requisições. Tente novamente mais tarde.')
  assert.equal(limited.headers.get('retry-after'), '5')
  g.network.setFault(g.deviceId, 'timeout')
  assertError(await g.send({ to: FRIEND, message: 'x' }), 504, 'A rede de mensagens não respondeu a tempo.')
  g.network.setFault(g.deviceId, 'fail')
  assertError(await g.send({ to: FRIEND, message: 'x' }), 502, 'Falha na rede de mensagens.')
})

test('a device queue over sendQueueLimit answers 429', async ctx => {
  const g = (ctx.g = await sendingGateway({ sendQueueLimit: 2, sendTimeoutMs: 5000 }))
  g.network.setFault(g.deviceId, 'hang')
  const first = g.send({ to: FRIEND, message: '1' })
  await sleep(40)
  const second = g.send({ to: FRIEND, message: '2' })
  await sleep(40)
  assertError(await g.send({ to: FRIEND, message: '3' }), 429, 'Fila de envio do dispositivo cheia. Tente novamente mais tarde.')
  g.network.setFault(g.deviceId, null)
  assertOk(await first)
  assertOk(await second)
})

test.run()
