import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createGateway } from '../src/index.ts'
import { resolveOptions } from '../src/resolve-options.ts'
import { MemoryNetwork, memoryTransport } from '../adapters/transport-memory/index.ts'
import { startGateway, waitFor } from './helpers/gateway.ts'

/**
 * Option values that resolveOptions let through though the gateway cannot work with them: each is
 * refused at start-up naming the option, or (a time longer than a Node timer holds) honoured.
 */
const test = suite('option values that would break the gateway later')

const REGISTER = { auth: 'registrar', nome: 'Ana', email: 'ana@example.com', senha: 'segredo1', telefone: '5511999990000', plano: '1' }

test('bodyLimit and scheduleQuota: a size that is not > 0 is refused at start-up', async () => {
  // Before: bodyLimit -1 answered every request with a body 413; NaN read bodies without any limit;
  // a NaN or negative quota answered every scheduled send 429.
  const refused: [Parameters<typeof resolveOptions>[0], RegExp][] = [
    [{ bodyLimit: -1 }, /bodyLimit/],
    [{ bodyLimit: Number.NaN }, /bodyLimit/],
    [{ bodyLimit: '0mb' }, /bodyLimit/],
    [{ scheduleQuota: { maxPending: Number.NaN } }, /scheduleQuota.maxPending/],
    [{ scheduleQuota: { maxPending: -1 } }, /scheduleQuota.maxPending/],
    [{ scheduleQuota: { maxBytes: -5 } }, /scheduleQuota.maxBytes/],
  ]
  for (const [options, message] of refused) assert.throws(() => resolveOptions(options), message, JSON.stringify(options))
  let started = false
  try {
    const gateway = await createGateway({ transport: memoryTransport({ network: new MemoryNetwork() }), bodyLimit: -1 })
    started = true
    await gateway.close()
  } catch (err) {
    assert.match((err as Error).message, /bodyLimit/)
  }
  assert.not.ok(started, 'createGateway({ bodyLimit: -1 }) must fail')
})

test('a plan whose days cannot make a date is refused at start-up (it answered every registration 500)', async () => {
  for (const days of [Number.POSITIVE_INFINITY, 1e9]) {
    assert.throws(() => resolveOptions({ plans: { '1': { name: 'Vitalício', days } } }), /plan 1/, String(days))
  }
  const t = await startGateway({ plans: { '1': { name: 'Cem anos', days: 36_500 } } })
  try {
    const answer = await t.post('/api/auth', REGISTER)
    assert.is(answer.status, 200, answer.text)
  } finally {
    await t.stop()
  }
})

test('agentTimeoutMs past 24.8 days (a Node timer) still waits for the reply', async () => {
  // Before: setTimeout fired at once for such a delay, every reply was aborted and none sent.
  const network = new MemoryNetwork()
  const t = await startGateway({
    network,
    agentTimeoutMs: 2 ** 31,
    agentResponder: async () => (await new Promise(resolve => setTimeout(resolve, 30)), 'resposta'),
  })
  try {
    const { authkey } = await t.register()
    const device = await t.linkedDevice(authkey, 'loja', '5511911112222')
    assert.is((await t.post('/api/v2/ia', { authkey, device: 'loja', agent_name: 'Bot' })).status, 200)
    await network.sendFromPhone('5511933334444', '5511911112222', { type: 'text', text: 'oi' })
    await waitFor(() => network.inbox('5511933334444').some(m => (m as { text?: string }).text === 'resposta'), 3000, 'the agent reply')
    assert.ok(device.id)
  } finally {
    await t.stop()
  }
})

test('shutdownGraceMs past 24.8 days: close() still waits for a request in flight', async () => {
  // Before: the grace timer fired at once, and the sessions closed under the request.
  let release!: () => void
  const held = new Promise<void>(resolve => (release = resolve))
  const t = await startGateway({ shutdownGraceMs: 2 ** 32, agentResponder: () => undefined })
  const { authkey } = await t.register()
  let closedAt = 0
  const inFlight = fetch(`${t.url}/api/auth`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: new ReadableStream({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode(JSON.stringify({ ...REGISTER, email: 'bia@example.com' }).slice(0, 10)))
        await held
        controller.enqueue(new TextEncoder().encode(JSON.stringify({ ...REGISTER, email: 'bia@example.com' }).slice(10)))
        controller.close()
      },
    }),
    duplex: 'half',
  } as RequestInit).then(r => r.status)
  await new Promise(resolve => setTimeout(resolve, 100))
  const closing = t.gateway.close().then(() => (closedAt = Date.now()))
  await new Promise(resolve => setTimeout(resolve, 200))
  assert.is(closedAt, 0, 'close() resolved with a request in flight')
  release()
  assert.is(await inFlight, 200)
  await closing
  await t.stop()
  assert.ok(authkey)
})

test('schedulePollMs and instances.heartbeatMs past 24.8 days: no interval that fires every millisecond', async () => {
  // Before: setInterval clamps a delay past 2^31 - 1 ms to 1 ms (a TimeoutOverflowWarning): the
  // scheduler rescanned the store, and the instance heartbeat wrote to it, a thousand times a second.
  const warnings: string[] = []
  const onWarning = (warning: Error) => void (warning.name === 'TimeoutOverflowWarning' && warnings.push(warning.message))
  process.on('warning', onWarning)
  try {
    const gateway = await createGateway({
      transport: memoryTransport({ network: new MemoryNetwork() }),
      schedulePollMs: 2 ** 31,
      instances: { heartbeatMs: 2 ** 31, ttlMs: 2 ** 33 },
    })
    await gateway.ready
    await new Promise(resolve => setImmediate(resolve)) // process 'warning' is emitted on a later tick
    await gateway.close()
    assert.equal(warnings, [], 'no timer overflowed')
  } finally {
    process.off('warning', onWarning)
  }
})

test('an option given as null (a JSON config\'s "not set") is as not given, as every other option already is', async () => {
  // Before: rateLimit, cluster and plans null made createGateway throw a TypeError naming none of them
  // ("Cannot read properties of null (reading 'perAccount')"), where timeZone, logger, cacheTtlMs... took their default.
  for (const key of ['rateLimit', 'cluster', 'plans', 'instances', 'timeZone', 'cacheTtlMs'] as const) {
    // The OTP secret is drawn anew when none is given: left out of the comparison.
    const resolved = { ...resolveOptions({ [key]: null } as unknown as Parameters<typeof resolveOptions>[0]), messaging: undefined }
    const defaults = { ...resolveOptions({}), messaging: undefined }
    assert.equal(JSON.stringify(resolved), JSON.stringify(defaults), key)
  }
  const t = await startGateway({ rateLimit: null, cluster: null, plans: null } as unknown as Parameters<typeof startGateway>[0])
  try {
    const answer = await t.post('/api/auth', REGISTER)
    assert.is(answer.status, 200, answer.text)
  } finally {
    await t.stop()
  }
})

test.run()
