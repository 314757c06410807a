import Koa from 'koa'
import { createGateway, type Gateway, type GatewayOptions } from '../../src/index.ts'
import { MemoryNetwork, memoryTransport } from '../../adapters/transport-memory/index.ts'
import { listen, post, type Answer, type Encoding } from './http.ts'
import { internalsOf } from '../../src/internals.ts'

/** A gateway on the simulated network, served over real HTTP on a free port. */
export interface TestGateway {
  url: string
  gateway: Gateway
  network: MemoryNetwork
  /** POST to a path of the gateway (`/api/...`). */
  post(path: string, body: Record<string, unknown>, encoding?: Encoding): Promise<Answer>
  /** Register an account; resolves with its authkey. */
  register(overrides?: Record<string, unknown>): Promise<{ authkey: string; email: string }>
  /** Create a device with operation 3 (`setAppkey` = name); resolves with its appkey, id and secret. */
  addDevice(authkey: string, name: string, extra?: Record<string, unknown>): Promise<{ appkey: string; id: string; webhookSecret: string; answer: Answer }>
  /** Create a device and link it to `phone` through the simulator. */
  linkedDevice(authkey: string, name: string, phone: string, extra?: Record<string, unknown>): Promise<{ appkey: string; id: string; webhookSecret: string }>
  stop(): Promise<void>
}

let emails = 0

/** Start a gateway with the memory transport (a fresh network unless given) and default storage. */
export async function startGateway(options: GatewayOptions & { network?: MemoryNetwork } = {}): Promise<TestGateway> {
  const { network = new MemoryNetwork(), ...gatewayOptions } = options
  const gateway = await createGateway({ transport: memoryTransport({ network }), ...gatewayOptions })
  const app = new Koa()
  app.use(gateway.routes())
  const server = await listen(app)
  const t: TestGateway = {
    url: server.url,
    gateway,
    network,
    post: (path, body, encoding) => post(server.url + path, body, encoding),
    async register(overrides = {}) {
      const email = `user${++emails}.${process.pid}@example.com`
      const answer = await t.post('/api/auth', {
        auth: 'registrar',
        nome: 'Test User',
        email,
        senha: 'senha-secreta',
        telefone: '+55 11 99999-0000',
        plano: '1',
        ...overrides,
      })
      if (answer.status !== 200) throw new Error(`register failed: ${answer.text}`)
      return { authkey: answer.body.data.authkey, email: answer.body.data.email }
    },
    async addDevice(authkey, name, extra = {}) {
      const answer = await t.post('/api/v2/qrcode', { authkey, setAppkey: name, ...extra })
      if (answer.status !== 200) throw new Error(`add device failed: ${answer.text}`)
      return { appkey: answer.body.appkey, id: answer.body.id, webhookSecret: answer.body.webhookSecret, answer }
    },
    async linkedDevice(authkey, name, phone, extra = {}) {
      const device = await t.addDevice(authkey, name, extra)
      await network.scan({ deviceId: device.id }, phone)
      await network.settled()
      await waitFor(async () => (await t.post('/api/developer', { authkey, message: name, checkDispositivo: 'true' })).body?.dispositivo?.conectado === true)
      return device
    },
    async stop() {
      await server.stop()
      await gateway.close()
    },
  }
  return t
}

/** Run `body` with a gateway started with `options`; the gateway is stopped after, also when `body` throws. */
export async function withGateway<T>(options: GatewayOptions & { network?: MemoryNetwork }, body: (t: TestGateway) => Promise<T>): Promise<T> {
  const t = await startGateway(options)
  try {
    return await body(t)
  } finally {
    await t.stop()
  }
}

/** A gateway (`options`) with one account and an unlinked device `loja`: where the suites of the HTTP edge start. */
export async function gatewayWithDevice(options: GatewayOptions = {}): Promise<{ t: TestGateway; authkey: string }> {
  const t = await startGateway(options)
  const { authkey } = await t.register()
  await t.addDevice(authkey, 'loja')
  return { t, authkey }
}

/** Poll `check` until it is true (or fail after `timeoutMs`). */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

/** Until the gateway's requests hold at least `bytes` of its media budget (a download's declared size counted, say), polled every 10 ms for at most 10 s. */
export async function mediaHeld(gateway: object, bytes: number): Promise<void> {
  const budget = internalsOf(gateway).mediaBudget
  for (const until = Date.now() + 10_000; budget.inUse() < bytes; await new Promise(resolve => setTimeout(resolve, 10)))
    if (Date.now() > until) throw new Error(`the media budget held ${budget.inUse()} bytes after 10 s, not ${bytes}`)
}
