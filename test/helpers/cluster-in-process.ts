import Koa from 'koa'
import type { Middleware } from 'koa'
import { createGateway, type Gateway, type GatewayOptions } from '../../src/index.ts'
import { internalsOf } from '../../src/internals.ts'
import type { Storage } from '../../src/ports/storage.ts'
import { memoryStorage } from './memory-storage.ts'
import type { MemoryNetwork } from '../../adapters/transport-memory/index.ts'
import { listen, post } from './http.ts'
import { waitFor } from './gateway.ts'

/** One instance of an in-process cluster, served over real HTTP at its advertised URL. */
export interface ClusterMember {
  url: string
  gateway: Gateway
  /** The instance's id in the cluster (what a forward signed for it names). */
  id: string
  /** Whether this instance holds the device's lease (its session lives here). */
  holds(deviceId: string): boolean
  /** Stop serving HTTP only (the instance stays alive in the store). */
  closeServer(): Promise<void>
  stop(): Promise<void>
}

/**
 * `count` gateways of one cluster on one shared store (two connections' worth of the test Map
 * storage), each listening before it is made so that its address is its advertised URL. `optionsOf`
 * gives each one its transport and other options (and may wrap its storage). For routing tests; claims of shared work are
 * shown with separate processes (test/helpers/cluster.ts).
 */
export async function inProcessCluster(count: number, optionsOf: (index: number, storage: Storage) => GatewayOptions): Promise<ClusterMember[]> {
  const store = memoryStorage()
  const members: ClusterMember[] = []
  for (let index = 0; index < count; index++) {
    let handler: Middleware = async (_ctx, next) => next()
    const app = new Koa()
    app.use((ctx, next) => handler(ctx, next))
    const server = await listen(app)
    const storage = index === 0 ? store : store.connectAgain()
    const options = optionsOf(index, storage)
    const gateway = await createGateway({
      storage,
      allowPrivateUrls: true,
      baseUrl: server.url,
      ...options,
      cluster: { secret: 'a cluster secret of enough length', advertiseUrl: server.url, ...options.cluster },
    })
    handler = gateway.routes()
    const leases = (internalsOf(gateway) as { leases: { holds(id: string): boolean; me: string } }).leases
    members.push({
      url: server.url,
      gateway,
      id: leases.me,
      holds: deviceId => leases.holds(deviceId),
      closeServer: () => server.stop(),
      stop: async () => (await gateway.close(), await server.stop().catch(() => {})),
    })
  }
  return members
}

/** Register an account through `url`; resolves with its authkey. */
export async function registerAt(url: string, email: string): Promise<string> {
  const answer = await post(`${url}/api/auth`, {
    auth: 'registrar',
    nome: 'Cluster User',
    email,
    senha: 'senha-secreta',
    telefone: '+55 11 99999-0000',
    plano: '1',
  })
  if (answer.status !== 200) throw new Error(`register failed: ${answer.text}`)
  return answer.body.data.authkey
}

/** An account registered through the first member and its device `loja` linked to `phone` and connected; which member holds it, and one that does not. */
export async function linkedDeviceInCluster(members: ClusterMember[], network: MemoryNetwork, email: string, phone = '5511944443333') {
  const url = members[0]!.url
  const authkey = await registerAt(url, email)
  const added = await post(`${url}/api/v2/qrcode`, { authkey, setAppkey: 'loja' })
  if (added.status !== 200) throw new Error(`add device failed: ${added.text}`)
  const deviceId: string = added.body.id
  await network.scan({ deviceId }, phone)
  await waitFor(async () => (await post(`${url}/api/developer`, { authkey, message: 'loja', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true)
  const holder = members.find(m => m.holds(deviceId))!
  return { authkey, deviceId, holder, other: members.find(m => m !== holder)! }
}

/** A storage whose calls wait while it is paused (a store connection that stalls, as for a paused process). */
export function pausableStorage(storage: Storage): { storage: Storage; pause(): void; resume(): void } {
  let gate: Promise<void> | undefined
  let open = () => {}
  const wait = async () => {
    while (gate) await gate
  }
  const wrapped = new Proxy(storage, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function') return value
      if (name === 'list') {
        return async function* (...args: unknown[]) {
          await wait()
          yield* value.apply(target, args)
        }
      }
      return async (...args: unknown[]) => (await wait(), value.apply(target, args))
    },
  })
  return {
    storage: wrapped,
    pause: () => void (gate ??= new Promise(resolve => (open = resolve))),
    resume: () => {
      gate = undefined
      open()
    },
  }
}
