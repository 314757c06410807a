import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Registry } from 'prom-client'
import { METRIC_NAMES } from '../src/metrics.ts'
import type { WebhookSender } from '../src/index.ts'
import { startGateway, waitFor, withGateway } from './helpers/gateway.ts'
import { request } from './helpers/http.ts'
import { scrape } from './helpers/metrics.ts'
import { memoryStorage } from './helpers/memory-storage.ts'

const DEVICE_PHONE = '5511999990001'
const FRIEND = '5511988880002'
const HOOK = 'https://hooks.example.com/zap'

const metrics = suite('metrics: option metrics, GET /metrics')

metrics('exposes every metric, in the Prometheus text format', async () => {
  await withGateway({ metrics: true }, async t => {
    const answer = await request(`${t.url}/metrics`)
    assert.is(answer.status, 200)
    assert.match(answer.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/)
    for (const name of METRIC_NAMES) assert.ok(answer.text.includes(`# TYPE ${name} `), name)
  })
})

metrics('counts requests by operation and answer status, sends by kind and result, devices by state', async () => {
  await withGateway({ metrics: true }, async t => {
    const { authkey } = await t.register()
    const device = await t.linkedDevice(authkey, 'loja', DEVICE_PHONE)
    await t.addDevice(authkey, 'balcao')
    const send = (body: Record<string, unknown>) => t.post('/api/create-message', { authkey, appkey: 'loja', to: FRIEND, ...body })
    assert.is((await send({ message: 'oi' })).status, 200)
    assert.is((await send({ latitude: '-23.5505', longitude: '-46.6333' })).status, 200)
    assert.is((await send({ appkey: 'nenhum', message: 'oi' })).status, 404)
    t.network.setFault(device.id, 'fail')
    assert.is((await send({ message: 'falha' })).status, 502)
    t.network.setFault(device.id, null)
    assert.is((await t.post('/api/developer', { authkey })).status, 401)

    const after = await scrape(t.url)
    assert.is(after.value('zapgate_http_requests_total', { route: '/api/create-message', operation: 'sendText', status: '200' }), 1)
    assert.is(after.value('zapgate_http_requests_total', { operation: 'sendText', status: '404' }), 1)
    assert.is(after.value('zapgate_http_requests_total', { operation: 'sendText', status: '502' }), 1)
    assert.is(after.value('zapgate_http_requests_total', { operation: 'sendLocation', status: '200' }), 1)
    assert.is(after.value('zapgate_http_requests_total', { route: '/api/developer', operation: 'none', status: '401' }), 1)
    assert.is(after.value('zapgate_http_requests_total', { operation: 'registerUser', status: '200' }), 1)
    assert.is(after.value('zapgate_http_request_duration_seconds_count', { operation: 'sendText' }), 3)
    assert.is(after.value('zapgate_sends_total', { kind: 'text', result: 'sent' }), 1)
    assert.is(after.value('zapgate_sends_total', { kind: 'location', result: 'sent' }), 1)
    assert.is(after.value('zapgate_sends_total', { kind: 'text', result: 'failed' }), 1)
    assert.is(after.value('zapgate_send_failures_total', { kind: 'text', reason: 'failed' }), 1)
    assert.is(after.value('zapgate_devices', { state: 'open' }), 1)
    assert.is(after.value('zapgate_devices', { state: 'linking' }), 1)
  })
})

metrics('a failed send counts its error code as the reason, never the answer status: a stalled send (504) is send-stalled', async () => {
  await withGateway({ metrics: true, sendTimeoutMs: 300 }, async t => {
    const { authkey } = await t.register()
    const device = await t.linkedDevice(authkey, 'loja', DEVICE_PHONE)
    t.network.setFault(device.id, 'hang')
    assert.is((await t.post('/api/create-message', { authkey, appkey: 'loja', to: FRIEND, message: 'travada' })).status, 504)
    const after = await scrape(t.url)
    assert.is(after.value('zapgate_send_failures_total', { kind: 'text', reason: 'send-stalled' }), 1)
    assert.is(after.value('zapgate_send_failures_total', { kind: 'text', reason: '504' }), 0)
    t.network.setFault(device.id, null)
  })
})

metrics("with httpStatus: 'always200' the status label is still the answer's own", async () => {
  await withGateway({ metrics: true, httpStatus: 'always200' }, async t => {
    const answer = await t.post('/api/create-message', { authkey: 'x', appkey: 'y', to: FRIEND, message: 'oi' })
    assert.is(answer.status, 200)
    assert.is((await scrape(t.url)).value('zapgate_http_requests_total', { operation: 'sendText', status: '401' }), 1)
  })
})

metrics('counts webhook deliveries, failed attempts, retries and dead letters, and shows the outbox depth', async () => {
  let answer = 500
  const sender: WebhookSender = { send: async () => ({ status: answer }) }
  await withGateway({ metrics: true, webhooks: sender, webhookRetryMs: [20] }, async t => {
    const { authkey } = await t.register()
    await t.linkedDevice(authkey, 'loja', DEVICE_PHONE, { webhook: HOOK })
    await t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'oi' })
    await waitFor(async () => (await scrape(t.url)).value('zapgate_webhook_retries_total') >= 1, 5000, 'a retried attempt')
    const failing = await scrape(t.url)
    assert.ok(failing.value('zapgate_webhook_failed_attempts_total') >= 2)
    assert.is(failing.value('zapgate_webhook_outbox_pending'), 1)
    assert.is(failing.value('zapgate_webhook_deliveries_total'), 0)

    answer = 200
    await waitFor(async () => (await scrape(t.url)).value('zapgate_webhook_deliveries_total') === 1, 5000, 'the delivery')
    const delivered = await scrape(t.url)
    assert.is(delivered.value('zapgate_webhook_outbox_pending'), 0)

    answer = 410
    await t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'de novo' })
    await waitFor(async () => (await scrape(t.url)).value('zapgate_webhook_dead_letters_total', { reason: 'gone' }) === 1, 5000, 'the dead letter')
  })
})

// The first attempt fails at once; the retry is the final attempt: it answers 410, or 500 only after the event's maximum age.
for (const [reason, retry] of [
  ['gone', async () => ({ status: 410 })],
  ['max-age', () => new Promise<{ status: number }>(done => setTimeout(() => done({ status: 500 }), 1_200))],
] as const) {
  metrics(`an event dead-lettered by its retry (${reason}) is one dead letter, and that retry counts`, async () => {
    let attempts = 0
    const sender: WebhookSender = { send: async () => (++attempts === 1 ? { status: 500 } : retry()) }
    await withGateway({ metrics: true, webhooks: sender, webhookRetryMs: [20], webhookMaxAgeMs: 1_000 }, async t => {
      const { authkey } = await t.register()
      await t.linkedDevice(authkey, 'loja', DEVICE_PHONE, { webhook: HOOK })
      await t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'oi' })
      await waitFor(async () => (await t.gateway.webhooks.deadLetters()).length === 1, 5000, 'the dead letter')
      assert.equal([attempts, (await t.gateway.webhooks.deadLetters())[0].attempts], [2, 2])
      const after = await scrape(t.url)
      assert.is(after.value('zapgate_webhook_dead_letters_total', { reason }), 1)
      assert.is(after.value('zapgate_webhook_dead_letters_total'), 1)
      assert.is(after.value('zapgate_webhook_failed_attempts_total'), 1)
      assert.is(after.value('zapgate_webhook_retries_total'), 1)
      assert.is(after.value('zapgate_webhook_outbox_pending'), 0)
    })
  })
}

metrics('an event that ages out between attempts is one dead letter; its retries count once each', async () => {
  let attempts = 0
  const sender: WebhookSender = { send: async () => (attempts++, { status: 500 }) }
  await withGateway({ metrics: true, webhooks: sender, webhookRetryMs: [20], webhookMaxAgeMs: 300 }, async t => {
    const { authkey } = await t.register()
    await t.linkedDevice(authkey, 'loja', DEVICE_PHONE, { webhook: HOOK })
    await t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'oi' })
    await waitFor(async () => (await t.gateway.webhooks.deadLetters()).length === 1, 5000, 'the dead letter')
    assert.is((await t.gateway.webhooks.deadLetters())[0].attempts, attempts)
    const after = await scrape(t.url)
    assert.is(after.value('zapgate_webhook_dead_letters_total', { reason: 'max-age' }), 1)
    assert.is(after.value('zapgate_webhook_retries_total') + 1, attempts)
  })
})

metrics('shows the scheduler backlog: pending scheduled messages, and those already due', async () => {
  await withGateway({ metrics: true }, async t => {
    const { authkey } = await t.register()
    await t.addDevice(authkey, 'loja')
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 19).replace('T', ' ')
    const scheduled = await t.post('/api/create-message', { authkey, appkey: 'loja', to: FRIEND, message: 'depois', agendamento: tomorrow })
    assert.is(scheduled.status, 200)
    const after = await scrape(t.url)
    assert.is(after.value('zapgate_scheduled_messages', { state: 'pending' }), 1)
    assert.is(after.value('zapgate_scheduled_messages', { state: 'failed' }), 0)
    assert.is(after.value('zapgate_scheduled_messages_due'), 0)
  })
})

metrics('two gateways in one process count apart; a host can pass its own Registry', async () => {
  const registry = new Registry()
  const first = await startGateway({ metrics: true })
  const second = await startGateway({ metrics: { registry } })
  try {
    assert.is(second.gateway.metrics, registry)
    await first.register()
    assert.is((await scrape(first.url)).value('zapgate_http_requests_total', { operation: 'registerUser' }), 1)
    assert.is((await scrape(second.url)).value('zapgate_http_requests_total', { operation: 'registerUser' }), 0)
    await second.register()
    assert.match(await registry.metrics(), /zapgate_http_requests_total\{route="\/api\/auth",operation="registerUser",status="200"\} 1/)
  } finally {
    await first.stop()
    await second.stop()
  }
})

metrics("a closed gateway leaves the host's Registry: no stale metrics of it, and a new gateway fills it again", async () => {
  const registry = new Registry()
  const first = await startGateway({ metrics: { registry } })
  await first.register()
  await first.stop()
  assert.equal(
    (await registry.getMetricsAsJSON()).map(metric => metric.name),
    [],
  )
  const second = await startGateway({ metrics: { registry } })
  try {
    assert.is((await scrape(second.url)).value('zapgate_http_requests_total', { operation: 'registerUser' }), 0)
  } finally {
    await second.stop()
  }
})

metrics(
  "a second gateway on a Registry that holds another's metrics: refused with what to do, nothing of it left running (started again on its store, it serves)",
  async () => {
    const registry = new Registry()
    const first = await startGateway({ metrics: { registry } })
    const store = memoryStorage()
    try {
      const refused = await startGateway({ storage: store, metrics: { registry } }).then(
        () => 'started',
        (err: Error) => err.message,
      )
      assert.match(refused, /metrics Registry already holds zapgate_http_requests_total/)
      assert.match(refused, /metrics: true/, 'it says what to do')
      const again = await startGateway({ storage: store.connectAgain(), metrics: true })
      await again.register()
      assert.is((await scrape(again.url)).value('zapgate_http_requests_total', { operation: 'registerUser' }), 1)
      await again.stop()
      await first.register()
      assert.is((await scrape(first.url)).value('zapgate_http_requests_total', { operation: 'registerUser' }), 1, "the first one's, untouched")
    } finally {
      await first.stop()
    }
  },
)

metrics('off by default: no /metrics route and no registry', async () => {
  await withGateway({}, async t => {
    assert.is((await request(`${t.url}/metrics`)).status, 404)
    assert.is(t.gateway.metrics, undefined)
  })
})

metrics.run()
