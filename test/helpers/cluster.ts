import { randomBytes } from 'node:crypto'
import { PNG } from 'pngjs'
import jsQR from 'jsqr'
import { post, request, type Answer } from './http.ts'
import { waitFor } from './gateway.ts'
import { startSimulator, type SimulatorProcess } from './simulator.ts'
import { startStandalone, type StandaloneServer } from './standalone.ts'
import { clearStore } from '../../bench/lib/stores.ts'

/** A cluster under test: the simulator server and gateway instances (each a process of its own) on one store. */
export interface Cluster {
  sim: SimulatorProcess
  instances: StandaloneServer[]
  env: Record<string, string>
  /** Start one more instance with the cluster's environment. */
  add(): Promise<StandaloneServer>
  /** POST to an operation path of instance `i` (modulo the live ones). */
  call(i: number, path: string, body: Record<string, unknown>): Promise<Answer>
  /** `GET /health` of an instance. */
  health(instance: StandaloneServer): Promise<{ id: string; devices: string[]; live: { id: string; devices: number }[] }>
  stop(): Promise<void>
}

/**
 * Start the simulator and `count` standalone gateways in cluster mode on `storeUrl` (a namespace of
 * their own), joined to the simulator, with a short lease time-to-live so that failover is quick.
 * `instances` keeps the order they were asked for in.
 */
export async function startCluster(storeUrl: string, count: number, extra: Record<string, string> = {}): Promise<Cluster> {
  const sim = await startSimulator(extra.LOG_LEVEL ? { LOG_LEVEL: extra.LOG_LEVEL } : {})
  const env = {
    GATEWAY_SIM_URL: sim.url,
    GATEWAY_STORE: storeUrl,
    GATEWAY_STORE_NAMESPACE: `cluster-${randomBytes(4).toString('hex')}`,
    GATEWAY_CLUSTER_SECRET: randomBytes(24).toString('base64url'),
    GATEWAY_ALLOW_PRIVATE_URLS: '1',
    GATEWAY_RATE_LIMIT: 'off',
    GATEWAY_LEASE_TTL_MS: '6000',
    GATEWAY_WEBHOOK_RETRY_MS: '500,1000,2000',
    ...extra,
  }
  const instances: StandaloneServer[] = []
  const cluster: Cluster = {
    sim,
    instances,
    env,
    async add() {
      const instance = await startStandalone(env)
      instances.push(instance)
      return instance
    },
    call: (i, path, body) => post(instances[i % instances.length]!.url + path, body),
    async health(instance) {
      return (await request(`${instance.url}/health`)).body.instance
    },
    async stop() {
      for (const instance of instances) {
        instance.child.kill('SIGCONT')
        await instance.kill('SIGKILL')
      }
      await sim.kill('SIGKILL')
      await dropNamespace(storeUrl, env.GATEWAY_STORE_NAMESPACE)
    },
  }
  // The first alone (it sets the store up), the others together: each start is mostly node loading the modules.
  if (count > 0) await cluster.add()
  instances.push(...(await Promise.all(Array.from({ length: Math.max(0, count - 1) }, () => startStandalone(env)))))
  return cluster
}

/** Register the sample account (operation 1) through instance `i` of a cluster (a simulator's or a peer's); its authkey. */
export async function registerAccount(cluster: Pick<Cluster, 'call'>, i = 0): Promise<string> {
  const registered = await cluster.call(i, '/api/auth', REGISTRATION)
  if (registered.status !== 200) throw new Error(`registration failed: ${registered.text}`)
  return registered.body.data.authkey as string
}

/** The sample account the cluster tests register. */
const REGISTRATION = { auth: 'registrar', nome: 'Ana', email: 'ana@example.com', senha: 'senha-secreta', telefone: '5511912345678', plano: '1' }

/** Create device `name` (operation 3) through instance `i` and link it to `phone` on the simulator by its QR. */
export async function linkDevice(
  cluster: Cluster,
  i: number,
  authkey: string,
  name: string,
  phone: string,
  webhook?: string,
): Promise<{ id: string; webhookSecret: string }> {
  const created = await cluster.call(i, '/api/v2/qrcode', { authkey, setAppkey: name, ...(webhook ? { webhook } : {}) })
  if (created.status !== 200) throw new Error(`operation 3 for ${name}: ${created.text}`)
  const scanned = await post(`${cluster.sim.url}/_sim/scan`, { qr: qrText(created.body.qrcode), phone })
  if (scanned.status !== 200) throw new Error(`scan of ${name}: ${scanned.text}`)
  await waitFor(async () => (await deviceState(cluster, i, authkey, name)) === 'open', 30_000, `${name} to open`)
  return { id: created.body.id, webhookSecret: created.body.webhookSecret }
}

/** The device's session state as operation 5, through instance `i`, tells it. */
export async function deviceState(cluster: Cluster, i: number, authkey: string, name: string): Promise<string | undefined> {
  return (await cluster.call(i, '/api/developer', { authkey, message: name, checkDispositivo: 'true' })).body?.dispositivo?.estado
}

/** The text of the QR in a `data:image/png;base64,...` URI: what a client scans on the simulator with `{qr, phone}`. */
export function qrText(dataUri: string): string {
  const image = PNG.sync.read(Buffer.from(dataUri.slice(dataUri.indexOf(',') + 1), 'base64'))
  const text = jsQR.default(new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.length), image.width, image.height)?.data
  if (!text) throw new Error('no QR in the image')
  return text
}

/**
 * Delete what a stopped cluster left under its store namespace (each cluster test has one of its own:
 * left behind, they piled up, and every listing of a Redis store SCANs all of them). Within 10 s, and
 * quietly: a store a fault test took away may not answer.
 */
export async function dropNamespace(storeUrl: string, namespace: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<void>(resolve => (timer = setTimeout(resolve, 10_000)))
  await Promise.race([clearStore(storeUrl, namespace).catch(() => undefined), late])
  clearTimeout(timer)
}
