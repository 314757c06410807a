import assert from 'node:assert/strict'
import Koa from 'koa'
import { MemoryNetwork, memoryTransport } from '../../adapters/transport-memory/index.ts'
import { createGateway, type Gateway, type GatewayOptions } from '../../src/index.ts'
import { listen, request, type Answer } from './http.ts'
import { assertError } from './messaging.ts'

/** The API's answer past a rate limit. */
export const LIMITED = 'Muitas requisições. Tente novamente mais tarde.'

/** A 429 with the API's message and a Retry-After of 1 to `maxSeconds` seconds. */
export function assertLimited(answer: Answer, maxSeconds: number, extra: Record<string, unknown> = {}): void {
  assertError(answer, 429, LIMITED, extra)
  const seconds = Number(answer.headers.get('retry-after'))
  assert.ok(Number.isInteger(seconds) && seconds >= 1 && seconds <= maxSeconds, `Retry-After ${answer.headers.get('retry-after')}`)
}

/** A gateway behind a trusted proxy (Koa `proxy: true`), so each request names its client IP in X-Forwarded-For. */
export interface ProxiedGateway {
  gateway: Gateway
  /** POST `body` to `path` as the client at `ip`. */
  from(ip: string, path: string, body: Record<string, unknown>): Promise<Answer>
  /** Register an account from `ip` and create its device `loja`; resolves with its authkey. */
  tenant(ip: string): Promise<string>
  /** Operation 5 (status of device `loja`) with `authkey`, as the client at `ip`. */
  status(ip: string, authkey: string): Promise<Answer>
  stop(): Promise<void>
}

let tenants = 0

/** Start a gateway on the simulated network behind a trusted proxy, served over real HTTP. */
export async function proxiedGateway(options: GatewayOptions = {}): Promise<ProxiedGateway> {
  const gateway = await createGateway({ transport: memoryTransport({ network: new MemoryNetwork() }), ...options })
  const app = new Koa({ proxy: true })
  app.use(gateway.routes())
  const server = await listen(app)
  const from = (ip: string, path: string, body: Record<string, unknown>) =>
    request(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': ip }, body: JSON.stringify(body) })
  return {
    gateway,
    from,
    async tenant(ip) {
      const email = `tenant${++tenants}.${process.pid}@example.com`
      const registered = await from(ip, '/api/auth', { auth: 'registrar', nome: 'Loja', email, senha: 'segredo1', telefone: '5511912345678', plano: '1' })
      if (registered.status !== 200) throw new Error(`register failed: ${registered.text}`)
      const authkey = registered.body.data.authkey as string
      const device = await from(ip, '/api/v2/qrcode', { authkey, setAppkey: 'loja' })
      if (device.status !== 200) throw new Error(`add device failed: ${device.text}`)
      return authkey
    },
    status: (ip, authkey) => from(ip, '/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' }),
    async stop() {
      await server.stop()
      await gateway.close()
    },
  }
}
