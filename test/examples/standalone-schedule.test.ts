import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { suite } from 'uvu'
import { formatWallClock } from '../../src/domain/messaging/schedule-time.ts'
import { waitFor } from '../helpers/gateway.ts'
import { post, request } from '../helpers/http.ts'
import { startStandalone, tempDir, type StandaloneServer } from '../helpers/standalone.ts'

const test = suite<{ servers: StandaloneServer[]; dir: string }>('standalone server: scheduled messages survive a restart')

const DEVICE_PHONE = '5511999990001'
const FRIEND = '5511988880002'

test.before(ctx => {
  ctx.servers = []
  ctx.dir = tempDir()
})
test.after(async ctx => {
  for (const server of ctx.servers) await server.kill('SIGKILL')
  rmSync(ctx.dir, { recursive: true, force: true })
})

test('a scheduled message is kept in the SQLite store across a restart and sent once when due, as is one that fell due while the server was down', async ctx => {
  const env = { GATEWAY_STORE: `sqlite://${ctx.dir}/gateway.sqlite` }
  const first = await startStandalone(env)
  ctx.servers.push(first)
  const registered = await post(`${first.url}/api/auth`, {
    auth: 'registrar',
    nome: 'Ana',
    email: 'ana@example.com',
    senha: 'senha-secreta',
    telefone: '5511999990000',
    plano: '1',
  })
  const authkey = registered.body.data.authkey as string
  assert.equal((await post(`${first.url}/api/v2/qrcode`, { authkey, setAppkey: 'loja' })).status, 200)
  assert.equal((await post(`${first.url}/_sim/scan`, { authkey, appkey: 'loja', phone: DEVICE_PHONE })).status, 200)
  const connected = async (url: string) =>
    (await post(`${url}/api/developer`, { authkey, message: 'loja', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true
  await waitFor(() => connected(first.url), 5000, 'the device to connect')

  const soon = Math.ceil((Date.now() + 2500) / 1000) * 1000
  const later = soon + 5000
  const schedule = (text: string, at: number) =>
    post(`${first.url}/api/create-message`, { appkey: 'loja', authkey, to: FRIEND, message: text, agendamento: formatWallClock(at, 'UTC') })
  assert.equal((await schedule('enquanto parado', soon)).status, 200)
  assert.equal((await schedule('depois de reiniciar', later)).status, 200)
  assert.equal(await first.kill('SIGTERM'), 0)

  await new Promise(resolve => setTimeout(resolve, Math.max(0, soon + 300 - Date.now())))
  const second = await startStandalone(env)
  ctx.servers.push(second)
  const inbox = async () => (await request(`${second.url}/_sim/inbox/${FRIEND}`)).body as { text: string; from: string }[]
  await waitFor(async () => (await inbox()).length >= 1, 8000, 'the overdue message')
  await waitFor(async () => (await inbox()).length >= 2, 8000, 'the message due after the restart')
  assert.ok(Date.now() >= later, 'not sent before its time')
  await new Promise(resolve => setTimeout(resolve, 500))
  const received = await inbox()
  assert.deepEqual(
    received.map(e => [e.from, e.text]),
    [
      [DEVICE_PHONE, 'enquanto parado'],
      [DEVICE_PHONE, 'depois de reiniciar'],
    ],
  )
  assert.ok(await connected(second.url), 'the device resumed without a new scan')
  const listed = await post(`${second.url}/api/create-message`, { appkey: 'loja', authkey, listaAgendamento: 'true', message: 'false' })
  assert.deepEqual(listed.body.data, [])
  assert.equal(await second.kill('SIGTERM'), 0)
})

test.run()
