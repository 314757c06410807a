import { randomBytes } from 'node:crypto'
import { freePort, request, startServer, type ServerProcess } from './process.ts'

/** Gateway instances in cluster mode (each a process of its own, bench/servers/gateway.mjs) on one store and one simulator server. */
export interface BenchCluster {
  sim: ServerProcess
  instances: ServerProcess[]
  /** The store namespace of this cluster (delete it with clearStore afterwards). */
  namespace: string
  /** Start one more instance with the cluster's environment. */
  add(): Promise<ServerProcess>
  /** `GET /health`'s `instance` part of an instance: its id, the ids of the devices it holds, the live instances and their loads as it sees them. */
  health(instance: ServerProcess): Promise<{ id: string; devices: string[]; live: { id: string; devices: number }[] }>
  /** How many devices the running instances hold between them. */
  held(): Promise<number>
  /** SIGTERM every instance (and the simulator when the cluster started it). */
  stop(): Promise<void>
}

/** How startCluster sets the cluster up. */
export interface ClusterOptions {
  storeUrl: string
  count: number
  /** Share a simulator server (default: start one, stopped with the cluster). */
  sim?: ServerProcess
  /** More environment for gateway.mjs (BENCH_LEASE_TTL_MS, BENCH_MIN_INTERVAL_MS, ...). */
  env?: Record<string, string>
  /**
   * Give each instance a host name of its own (see canSetHostname), as instances on separate machines
   * have: an instance then cannot tell that another one's process is gone by its pid, only by its
   * silence (the time-to-live).
   */
  hostPerInstance?: boolean
  /** Run the instances of another copy of the package (its own `dist/` and `bench/servers/`: see startServer). */
  root?: string
}

/** Start `count` instances in cluster mode on `storeUrl` under a namespace of their own, joined to one simulator server. */
export async function startCluster(options: ClusterOptions): Promise<BenchCluster> {
  const sim = options.sim ?? (await startServer('simulator.mjs'))
  const namespace = `zapgate-bench-cluster-${process.pid}-${randomBytes(4).toString('hex')}`
  const env = {
    BENCH_STORE: options.storeUrl,
    BENCH_NAMESPACE: namespace,
    BENCH_SIM_URL: sim.url,
    BENCH_CLUSTER_SECRET: randomBytes(24).toString('base64url'),
    ...options.env,
  }
  const instances: ServerProcess[] = []
  let started = 0
  const cluster: BenchCluster = {
    sim,
    instances,
    namespace,
    async add() {
      const port = await freePort()
      const hostname = { ...(options.hostPerInstance ? { hostname: `bench-host-${++started}` } : {}), ...(options.root ? { root: options.root } : {}) }
      const instance = await startServer('gateway.mjs', { ...env, PORT: String(port), BENCH_ADVERTISE_URL: `http://127.0.0.1:${port}` }, hostname)
      instances.push(instance)
      return instance
    },
    async health(instance) {
      return (await request(`${instance.url}/health`)).instance
    },
    async held() {
      const all = await Promise.all(instances.map(instance => cluster.health(instance).catch(() => ({ devices: [] as string[] }))))
      return all.reduce((sum, h) => sum + h.devices.length, 0)
    },
    async stop() {
      await Promise.all(instances.map(instance => instance.stop()))
      if (!options.sim) await sim.stop()
    },
  }
  try {
    for (let i = 0; i < options.count; i++) await cluster.add()
  } catch (error) {
    await cluster.stop()
    throw error
  }
  return cluster
}

/** A linked device of a cluster fixture and the instance that holds its session. */
export interface ClusterDevice {
  appkey: string
  id: string
  phone: string
  /** Index in `cluster.instances` of its holder (when the fixture was made). */
  holder: number
}

/**
 * Register an account and link `count` devices by pairing code, then wait until every one is open and
 * read which instance holds each. A new device goes to the least loaded instance as the heartbeats
 * tell (the instance asked on a tie), so the devices are made in batches of one per instance, each
 * through the next instance, and before the next batch every instance must see the loads of the
 * batch: the devices end up spread evenly.
 */
export async function linkDevices(cluster: BenchCluster, count: number, phonePrefix = '55119'): Promise<{ authkey: string; devices: ClusterDevice[] }> {
  const first = cluster.instances[0]!
  const registered = await first.post('/api/auth', {
    auth: 'registrar',
    nome: 'Bench',
    email: `bench-${randomBytes(4).toString('hex')}@example.com`,
    senha: 'senha-bench',
    telefone: '5511900000000',
    plano: '1',
  })
  const authkey = registered.data.authkey as string
  const devices: ClusterDevice[] = []
  const n = cluster.instances.length
  for (let d = 0; d < count; d++) {
    const phone = `${phonePrefix}${String(10_000_000 + d)}`
    const created = await cluster.instances[d % n]!.post('/api/v2/qrcode', { authkey, setAppkey: `bench-${d}`, phone })
    await cluster.sim.post('/_sim/scan', { code: created.code, phone })
    devices.push({ appkey: created.appkey, id: created.id, phone, holder: -1 })
    if ((d + 1) % n === 0 || d + 1 === count) {
      const linked = d + 1
      await waitUntil(async () => (await cluster.held()) === linked, 30_000, `the ${linked} devices to open`)
      await waitUntil(
        async () => (await Promise.all(cluster.instances.map(i => cluster.health(i)))).every(h => h.live.reduce((sum, l) => sum + l.devices, 0) === linked),
        30_000,
        'every instance to see the loads',
      )
    }
  }
  await readHolders(cluster, devices)
  return { authkey, devices }
}

/** Set each device's `holder` from the instances' /health. */
export async function readHolders(cluster: BenchCluster, devices: ClusterDevice[]): Promise<void> {
  const held = await Promise.all(cluster.instances.map(instance => cluster.health(instance)))
  for (const device of devices) device.holder = held.findIndex(h => h.devices.includes(device.id))
}

/** Poll `check` every 20 ms until it is true; throws after `timeoutMs`. */
export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

/**
 * The two sides of a 1-vs-3 comparison on one store and one simulator: a cluster of one instance and
 * one of three, each with `devices` devices linked. Each cluster joins `clusters` as soon as it runs,
 * so that the caller's cleanup stops it even when the next step fails.
 */
export async function oneAndThree(sim: ServerProcess, storeUrl: string, devices: number, clusters: BenchCluster[]) {
  // BENCH_CLUSTER_ROOT: the instances of another build (a before/after comparison with this bench's method).
  const root = process.env.BENCH_CLUSTER_ROOT ? { root: process.env.BENCH_CLUSTER_ROOT } : {}
  const one = await startCluster({ storeUrl, count: 1, sim, ...root })
  clusters.push(one)
  const three = await startCluster({ storeUrl, count: 3, sim, ...root })
  clusters.push(three)
  return { one, three, oneFixture: await linkDevices(one, devices, '55118'), threeFixture: await linkDevices(three, devices, '55117') }
}
