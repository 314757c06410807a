import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { existsSync } from 'node:fs'
import { startStandalone, tempDir, type StandaloneServer } from '../helpers/standalone.ts'
import { post, request } from '../helpers/http.ts'

const restart = suite<{ servers: StandaloneServer[] }>('examples/standalone.ts restart on its SQLite store')
restart.before(ctx => {
  ctx.servers = []
})
restart.after(async ctx => {
  for (const server of ctx.servers) await server.kill('SIGKILL')
})

restart('accounts and devices survive SIGKILL and a restart; a linked device resumes without a new scan', async ctx => {
  const dir = tempDir()
  const env = { GATEWAY_STORE: `sqlite://${join(dir, 'gateway.sqlite')}` }
  const first = await startStandalone(env)
  ctx.servers.push(first)
  const registered = await post(`${first.url}/api/auth`, {
    auth: 'registrar',
    nome: 'Rita',
    email: 'rita@example.com',
    senha: 'segredo1',
    telefone: '5511912345678',
    plano: '1',
  })
  const authkey = registered.body.data.authkey
  const device = await post(`${first.url}/api/v2/qrcode`, { authkey, setAppkey: 'persistente' })
  const other = await post(`${first.url}/api/developer`, { authkey, message: 'sem-link', conecteQR: 'true' })
  assert.is((await post(`${first.url}/_sim/scan`, { authkey, appkey: 'persistente', phone: '5511955556666' })).status, 200)
  assert.ok(existsSync(join(dir, 'gateway.sqlite')))
  assert.is(await first.kill('SIGKILL'), null)

  const second = await startStandalone(env)
  ctx.servers.push(second)
  assert.is(
    (
      await post(`${second.url}/api/auth`, {
        auth: 'registrar',
        nome: 'Rita',
        email: 'rita@example.com',
        senha: 'x1y2z3w4',
        telefone: '5511912345678',
        plano: '1',
      })
    ).status,
    409,
  )
  const deadline = Date.now() + 5000
  let status: any
  do {
    status = (await post(`${second.url}/api/developer`, { authkey, message: 'persistente', checkDispositivo: 'true' })).body
  } while (!status.dispositivo?.conectado && Date.now() < deadline && (await new Promise(r => setTimeout(r, 50)), true))
  assert.ok(status.dispositivo, JSON.stringify(status))
  assert.is(status.dispositivo.id, device.body.id)
  assert.is(status.dispositivo.conectado, true)
  assert.is(status.dispositivo.telefone, '5511955556666')
  const unlinked = await post(`${second.url}/api/developer`, { authkey, message: other.body.appkey, checkDispositivo: 'true' })
  assert.is(unlinked.body.dispositivo.id, other.body.id)
  assert.is(unlinked.body.dispositivo.conectado, false)
})

restart('SIGTERM shuts down cleanly with exit code 0', async ctx => {
  const dir = tempDir()
  const server = await startStandalone({ GATEWAY_STORE: `sqlite://${join(dir, 'gateway.sqlite')}` })
  ctx.servers.push(server)
  assert.is((await request(`${server.url}/api/auth`, { method: 'POST' })).status, 401)
  assert.is(await server.kill('SIGTERM'), 0)
  assert.match(server.output(), /"msg":"stopped"/)
})

restart('an unknown transport or store fails at start with a clear message', async () => {
  await startStandalone({ GATEWAY_TRANSPORT: 'carrier-pigeon' }).then(
    () => assert.unreachable('should not start'),
    err => assert.match(String(err), /GATEWAY_TRANSPORT must be baileys or memory/),
  )
  await startStandalone({ GATEWAY_STORE: 'mongodb://x' }).then(
    () => assert.unreachable('should not start'),
    err => assert.match(String(err), /mongodb/),
  )
})

restart.run()
