import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startGateway, waitFor, type TestGateway } from '../helpers/gateway.ts'
import { startGatedReceiver, type GatedReceiver } from './webhook-http-gated-receiver.ts'

/**
 * Two tenants' devices whose webhooks point at one receiver host, through the gateway and its
 * default sender over real HTTP: device A's endpoint hangs (its attempts time out), device B's
 * answers at once.
 */
type Ctx = { t: TestGateway; receiver: GatedReceiver }
const test = suite<Ctx>('webhook deliveries are fair per device on a shared receiver host')

const FRIEND = '5511988880003'
const EVENTS = 20

test.before.each(async ctx => {
  ctx.receiver = await startGatedReceiver()
  // The default sender (8 per host, 4 per device); attempts time out after 2 s, retried 200 ms later.
  ctx.t = await startGateway({ allowPrivateUrls: true, webhookTimeoutMs: 2_000, webhookRetryMs: [200] })
})
test.after.each(async ctx => {
  await ctx.t.stop()
  await ctx.receiver.stop()
})

/** The ids of the distinct text events that reached `path` (the receiver also gets connection events). */
function textEvents(receiver: GatedReceiver, path: string): Set<string> {
  return new Set(
    receiver
      .to(path)
      .filter(hook => JSON.parse(hook.body).text !== undefined)
      .map(hook => String(hook.headers['webhook-id'])),
  )
}

test("a hung receiver endpoint of one device does not delay another device's events to the same host; its own are delivered once it answers", async ({
  t,
  receiver,
}) => {
  const deliveries: Array<{ deviceId: string; eventId: string; attempt: number }> = []
  const failures: string[] = []
  t.gateway.events.on('delivery', ({ deviceId, eventId, attempt }) => deliveries.push({ deviceId, eventId, attempt }))
  t.gateway.events.on('delivery-failed', ({ deviceId }) => failures.push(deviceId))
  const a = await t.linkedDevice((await t.register()).authkey, 'lento', '5511999991001', { webhook: `${receiver.origin}/a` })
  const b = await t.linkedDevice((await t.register()).authkey, 'rapido', '5511999991002', { webhook: `${receiver.origin}/b` })
  const deliveredOf = (deviceId: string, path: string) => {
    const done = new Set(deliveries.filter(d => d.deviceId === deviceId).map(d => d.eventId))
    return [...textEvents(receiver, path)].filter(id => done.has(id)).length
  }

  receiver.hold('/a')
  for (let i = 0; i < EVENTS; i++) {
    await t.network.sendFromPhone(FRIEND, '5511999991001', { type: 'text', text: `para A ${i}` })
    await t.network.sendFromPhone(FRIEND, '5511999991002', { type: 'text', text: `para B ${i}` })
  }
  await waitFor(() => deliveredOf(b.id, '/b') === EVENTS, 10_000, `device B's ${EVENTS} events`)
  assert.is(receiver.answered('/a'), 0, "device A's endpoint was hanging all along")
  assert.is(deliveredOf(a.id, '/a'), 0)
  await waitFor(() => failures.includes(a.id), 10_000, "device A's first attempts timing out")
  assert.is(failures.filter(id => id === b.id).length, 0, "none of device B's attempts failed or waited out its time-out")
  assert.ok(
    deliveries.filter(d => d.deviceId === b.id).every(d => d.attempt === 1),
    "each of device B's events was delivered on its first attempt",
  )

  receiver.release('/a')
  await waitFor(() => deliveredOf(a.id, '/a') === EVENTS, 20_000, `device A's ${EVENTS} events delivered`)
  assert.ok(
    deliveries.some(d => d.deviceId === a.id && d.attempt > 1),
    "device A's events were retried",
  )
  assert.is(receiver.to('/b').filter(hook => JSON.parse(hook.body).text !== undefined).length, EVENTS, "device B's events arrived once each")
})

test.run()
