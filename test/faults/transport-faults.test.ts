import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { memoryTransport, MemoryNetwork } from '../../adapters/transport-memory/index.ts'
import type { Transport } from '../../src/index.ts'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'
import { request, type Answer } from '../helpers/http.ts'

/** How a faulty transport misbehaves on one method. */
type Fault = 'throw' | 'reject-string' | 'hang'

/** A memory transport whose methods can be made to throw a non-transport error, reject with a string, or hang. */
function faultyTransport(network: MemoryNetwork): { transport: Transport; faults: Map<string, Fault> } {
  const inner = memoryTransport({ network }) as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
  const faults = new Map<string, Fault>()
  const transport = {} as Record<string, unknown>
  for (const name of ['start', 'stop', 'connect', 'disconnect', 'link', 'status', 'logout', 'send', 'markRead', 'groupInfo', 'groupCreate', 'groupJoin']) {
    transport[name] = (...args: unknown[]) => {
      const fault = faults.get(name)
      if (fault === 'throw') throw new TypeError("Cannot read properties of undefined (reading 'socket')")
      if (fault === 'reject-string') return Promise.reject('boom')
      if (fault === 'hang') return new Promise(() => {})
      return inner[name].apply(inner, args)
    }
  }
  return { transport: transport as unknown as Transport, faults }
}

type Ctx = { t: TestGateway; faults: Map<string, Fault>; authkey: string; appkey: string }
const test = suite<Ctx>('a transport that throws or hangs gives a clear status, never a 500 with a stack')

test.before(async ctx => {
  const network = new MemoryNetwork()
  const { transport, faults } = faultyTransport(network)
  ctx.faults = faults
  ctx.t = await startGateway({ network, transport, sendTimeoutMs: 300 })
  // A hanging answer fails the test with a clear error instead of holding it until the runner's limit.
  ctx.t.post = (path, body) =>
    request(ctx.t.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    })
  ctx.authkey = (await ctx.t.register()).authkey
  ctx.appkey = (await ctx.t.linkedDevice(ctx.authkey, 'loja', '5511999990001')).appkey
})
test.after.each(ctx => ctx.faults.clear())
test.after(ctx => ctx.t.stop())

/** The answer is exactly `{status, message}`: nothing of the error (stack, cause) leaks. */
function clean(answer: Answer, status: number, message: string) {
  assert.is(answer.status, status, answer.text)
  assert.equal(answer.body, { status, message })
  assert.not.match(answer.text, /TypeError|boom|at .*\(|socket/)
}

const FAILED = 'Falha na rede de mensagens.'
const TIMEOUT = 'A rede de mensagens não respondeu a tempo.'
const STALLED = 'O envio não foi concluído a tempo; a mensagem pode não ter sido entregue.'

test('a send that throws a non-transport error or rejects with a string is 502', async ({ t, faults, authkey, appkey }) => {
  for (const fault of ['throw', 'reject-string'] as const) {
    faults.set('send', fault)
    clean(await t.post('/api/create-message', { appkey, authkey, to: '5511988880002', message: 'oi' }), 502, FAILED)
  }
})

test('a send that hangs is 504 after sendTimeoutMs and the next one goes through', async ({ t, faults, authkey, appkey }) => {
  faults.set('send', 'hang')
  clean(await t.post('/api/create-message', { appkey, authkey, to: '5511988880002', message: 'oi' }), 504, STALLED)
  faults.clear()
  assert.is((await t.post('/api/create-message', { appkey, authkey, to: '5511988880002', message: 'de novo' })).status, 200)
})

test('a status call that hangs is 504, one that throws is 502 (sends and device status alike)', async ({ t, faults, authkey, appkey }) => {
  faults.set('status', 'hang')
  clean(await t.post('/api/create-message', { appkey, authkey, to: '5511988880002', message: 'oi' }), 504, TIMEOUT)
  clean(await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' }), 504, TIMEOUT)
  faults.set('status', 'throw')
  clean(await t.post('/api/create-message', { appkey, authkey, to: '5511988880002', message: 'oi' }), 502, FAILED)
  clean(await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' }), 502, FAILED)
})

test('a link that throws or hangs is 502/504 on operation 3 and 404 Erro ao adicionar dispositivo. on operation 4', async ({ t, faults, authkey }) => {
  faults.set('link', 'throw')
  clean(await t.post('/api/v2/qrcode', { authkey, setAppkey: 'novo' }), 502, FAILED)
  clean(await t.post('/api/developer', { authkey, message: 'novo', conecteQR: 'true' }), 404, 'Erro ao adicionar dispositivo.')
  faults.set('link', 'hang')
  clean(await t.post('/api/v2/qrcode', { authkey, setAppkey: 'novo' }), 504, TIMEOUT)
  clean(await t.post('/api/developer', { authkey, message: 'novo', conecteQR: 'true' }), 404, 'Erro ao adicionar dispositivo.')
})

test('group calls and read receipts that throw are 502, that hang are 504', async ({ t, faults, authkey, appkey }) => {
  const keys = { appkey, authkey }
  faults.set('groupCreate', 'reject-string')
  clean(await t.post('/api/groups', { ...keys, message: 'Equipe', usuarios: '5511988880002', criarGrupo: 'true' }), 502, FAILED)
  faults.set('groupInfo', 'hang')
  clean(await t.post('/api/groups', { ...keys, message: 'false', infoConvite: '120363000000000001@g.us' }), 504, STALLED)
  faults.set('markRead', 'throw')
  clean(await t.post('/api/create-message', { ...keys, to: '5511988880002', markRead: '3EB0000000000000000A' }), 502, FAILED)
})

test('a logout that hangs is the documented 500 of operation 6 and the device is kept', async ({ t, faults, authkey }) => {
  faults.set('logout', 'hang')
  clean(await t.post('/api/developer', { authkey, message: 'loja', apagarDispositivo: 'true' }), 500, 'Ocorreu um erro ao excluir o dispositivo.')
  faults.clear()
  assert.is((await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })).body.dispositivo.conectado, true)
})

test.run()
