import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { post, request } from './http.ts'
import { deviceState, dropNamespace, qrText, type Cluster } from './cluster.ts'
import { waitFor } from './gateway.ts'
import type { SimulatorProcess } from './simulator.ts'
import { freePort, startStandalone, watch, type StandaloneServer } from './standalone.ts'
import { NODE_TS } from './node-ts.ts'

const root = new URL('../..', import.meta.url).pathname

/** What `GET /_sim/stats` of the peer server answers: the simulator's counts and the peer's own. */
export interface PeerServerStats {
  connections: number
  replaced: number
  sent: number
  received: number
  waiting: number
  peer: {
    upgrades: number
    connections: number
    logins: number
    refusedLogins: number
    pairings: number
    replaced: number
    decrypted: number
    phoneMessages: number
  }
}

/** A linked device as the peer server tells it (`GET /_peer/devices/:phone`). */
export interface PeerDevice {
  jid: string
  lid: string
  connected: boolean
  logins: number
  preKeys: number
  waiting: number
}

/** The local WhatsApp peer server (examples/wa-peer.ts, what `npm run wa-peer` runs) as a child process. */
export interface PeerProcess extends SimulatorProcess {
  stats(): Promise<PeerServerStats>
  /** The devices linked to the account of `phone`. */
  devices(phone: string): Promise<PeerDevice[]>
  /** What went wrong on the peer's side and the iqs it did not know (`GET /_peer/records`). */
  records(): Promise<{ problems: string[]; unknownIqs: string[] }>
}

/** Start `npm run wa-peer`'s program on `port` (default: a free one) and wait until it listens. */
export async function startPeerServer(env: Record<string, string> = {}, port?: number): Promise<PeerProcess> {
  port ??= await freePort()
  const child = spawn(process.execPath, [...NODE_TS, `${root}examples/wa-peer.ts`], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'info', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const { output } = watch(child)
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  const deadline = Date.now() + 60_000 // node, the TypeScript loader and Baileys start slowly on a loaded machine
  while (!output().includes('WhatsApp peer listening')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`the peer server did not start:\n${output()}`)
    }
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  const url = `http://127.0.0.1:${port}`
  const json = async (path: string) => {
    const answer = await request(url + path)
    if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status} ${answer.text}`)
    return answer.body
  }
  return {
    url,
    port,
    child,
    output,
    stats: () => json('/_sim/stats'),
    devices: phone => json(`/_peer/devices/${phone}`),
    records: () => json('/_peer/records'),
    async kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    },
  }
}

/** A cluster of gateways on the real Baileys stack, joined to one peer server (`cluster.sim` is the peer). */
export interface PeerCluster extends Cluster {
  sim: PeerProcess
  /** The 503 answers (`Retry-After`: the store did not answer in time) that `call` retried, by path. */
  retried: string[]
}

/**
 * Start the peer server and `count` standalone gateways in cluster mode on `storeUrl` (a namespace
 * of their own) with GATEWAY_TRANSPORT=baileys GATEWAY_WA_PEER=<the peer>, each a process of its
 * own. The lease time-to-live is 30 s (default 15): every Baileys socket is real (a first login
 * generates 812 pre-keys), and on a loaded machine a shorter one fenced instances that were only
 * slow, closing a device's link before its scan. Failover after `kill -9` on one host does not wait
 * for it: the gone pid is seen at the next heartbeat (every 6 s: npm start beats at a fifth of it). `linkDevice` and `deviceState` of
 * test/helpers/cluster.ts work on it (a phone scans by the QR's text on the peer's `/_sim/scan`).
 */
export async function startPeerCluster(storeUrl: string, count: number, extra: Record<string, string> = {}): Promise<PeerCluster> {
  const peerPort = await freePort()
  const env = {
    GATEWAY_TRANSPORT: 'baileys',
    GATEWAY_WA_PEER: `http://127.0.0.1:${peerPort}`,
    GATEWAY_STORE: storeUrl,
    GATEWAY_STORE_NAMESPACE: `peer-cluster-${randomBytes(4).toString('hex')}`,
    GATEWAY_CLUSTER_SECRET: randomBytes(24).toString('base64url'),
    GATEWAY_ALLOW_PRIVATE_URLS: '1',
    GATEWAY_RATE_LIMIT: 'off',
    GATEWAY_WEBHOOK_RETRY_MS: '500,1000,2000',
    GATEWAY_LEASE_TTL_MS: '30000',
    ...extra,
  }
  const instances: StandaloneServer[] = []
  // Two at a time: a gateway joining the peer waits for its root (retried each second), so they may
  // start together; four at once on a loaded 2-core host took one past startStandalone's 60 s limit.
  const starters: (() => Promise<PeerProcess | StandaloneServer>)[] = [
    () => startPeerServer(extra.LOG_LEVEL ? { LOG_LEVEL: extra.LOG_LEVEL } : {}, peerPort),
    ...Array.from({ length: count }, () => () => startStandalone(env)),
  ]
  const started: (PeerProcess | StandaloneServer)[] = []
  for (let i = 0; i < starters.length; i += 2) {
    const batch = await Promise.allSettled(starters.slice(i, i + 2).map(start => start()))
    for (const s of batch) if (s.status === 'fulfilled') started.push(s.value)
    const failed = batch.find(s => s.status === 'rejected')
    if (failed) {
      for (const process of started) await process.kill('SIGKILL')
      throw failed.reason
    }
  }
  const [peer, ...gateways] = started
  instances.push(...(gateways as StandaloneServer[]))
  const cluster: PeerCluster = {
    sim: peer as PeerProcess,
    instances,
    env,
    async add() {
      const instance = await startStandalone(env)
      instances.push(instance)
      return instance
    },
    // A 503 is the gateway's "try again" (its store did not answer within its 2 s deadline, which a
    // host loaded by other work causes): retried as a client would, for up to 30 s, and counted.
    async call(i, path, body) {
      const deadline = Date.now() + 30_000
      for (;;) {
        const answer = await post(instances[i % instances.length]!.url + path, body)
        if (answer.status !== 503 || Date.now() > deadline) return answer
        cluster.retried.push(path)
        await new Promise(resolve => setTimeout(resolve, 500))
      }
    },
    retried: [],
    async health(instance) {
      return (await request(`${instance.url}/health`)).body.instance
    },
    async stop() {
      for (const instance of instances) {
        instance.child.kill('SIGCONT')
        await instance.kill('SIGKILL')
      }
      await cluster.sim.kill('SIGKILL')
      await dropNamespace(storeUrl, env.GATEWAY_STORE_NAMESPACE)
    },
  }
  return cluster
}

/**
 * Create device `name` (operation 3) through instance `i` and link it to `phone` by the QR's text on
 * the peer, as `linkDevice` of test/helpers/cluster.ts does, waiting up to `timeoutMs` for it to open:
 * on the real stack a first login generates and uploads 812 pre-keys, which takes long on a loaded machine.
 */
export async function linkOnPeer(
  cluster: PeerCluster,
  i: number,
  authkey: string,
  name: string,
  phone: string,
  webhook: string,
  timeoutMs = 90_000,
): Promise<{ id: string; webhookSecret: string }> {
  const created = await cluster.call(i, '/api/v2/qrcode', { authkey, setAppkey: name, webhook })
  if (created.status !== 200) throw new Error(`operation 3 for ${name}: ${created.text}`)
  const scanned = await post(`${cluster.sim.url}/_sim/scan`, { qr: qrText(created.body.qrcode), phone })
  if (scanned.status !== 200) throw new Error(`scan of ${name}: ${scanned.text}`)
  await waitFor(async () => (await deviceState(cluster, i, authkey, name)) === 'open', timeoutMs, `${name} to open`)
  return { id: created.body.id, webhookSecret: created.body.webhookSecret }
}
