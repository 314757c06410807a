import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { randomBytes } from 'node:crypto'
import { post, request } from '../helpers/http.ts'
import { waitFor } from '../helpers/gateway.ts'
import { dropNamespace, qrText } from '../helpers/cluster.ts'
import { needing, REDIS } from '../helpers/requires.ts'
import { NODE_TS } from '../helpers/node-ts.ts'

const root = new URL('../..', import.meta.url).pathname

/** Whether a TCP port of 127.0.0.1 is free now. */
function portFree(port: number): Promise<boolean> {
  const server = createServer()
  return new Promise(resolve => {
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/** A base port with the next `count` ports free. */
async function freeRun(count: number): Promise<number> {
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 40_000)
    const free = await Promise.all(Array.from({ length: count }, (_, i) => portFree(base + i)))
    if (free.every(Boolean)) return base
  }
}

const onRedis = needing(test, REDIS, 'the local cluster recipe (npm run cluster) on Redis')

onRedis(
  'npm run cluster (examples/local-cluster.ts): the simulator and 3 instances on one store; a device linked through one is used through the others; SIGTERM to the process group stops them all, the sends in flight answered',
  async () => {
    const redis = REDIS.value!
    const namespace = `local-cluster-${randomBytes(4).toString('hex')}`
    const base = await freeRun(4)
    const child = spawn(process.execPath, [...NODE_TS, `${root}examples/local-cluster.ts`], {
      cwd: root,
      env: {
        ...process.env,
        GATEWAY_STORE: redis,
        GATEWAY_STORE_NAMESPACE: namespace,
        PORT: String(base),
        SIM_PORT: String(base + 3),
        LOG_LEVEL: 'warn',
        GATEWAY_MIN_INTERVAL_MS: '1000', // passed through to the instances: a device's sends a second apart
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: a failed test kills the recipe and every process it started.
      detached: true,
    })
    let output = ''
    child.stdout!.on('data', d => (output += d))
    child.stderr!.on('data', d => (output += d))
    const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
    try {
      await waitFor(() => /cluster ready/.test(output), 60_000, `the cluster to start: ${output}`)
      const urls = [0, 1, 2].map(i => `http://127.0.0.1:${base + i}`)
      const sim = `http://127.0.0.1:${base + 3}`
      const registered = await post(`${urls[0]}/api/auth`, {
        auth: 'registrar',
        nome: 'Ana',
        email: 'ana@example.com',
        senha: 'senha-secreta',
        telefone: '5511912345678',
        plano: '1',
      })
      assert.is(registered.status, 200, registered.text)
      const authkey = registered.body.data.authkey
      const created = await post(`${urls[1]}/api/v2/qrcode`, { authkey, setAppkey: 'loja' })
      assert.is(created.status, 200, created.text)
      assert.is((await post(`${sim}/_sim/scan`, { qr: qrText(created.body.qrcode), phone: '5511955556666' })).status, 200)
      await waitFor(
        async () => (await post(`${urls[2]}/api/developer`, { authkey, message: 'loja', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true,
        20_000,
        'the device to open',
      )
      for (const url of urls) {
        const sent = await post(`${url}/api/create-message`, { authkey, appkey: 'loja', to: '5511988887777', message: `via ${url}` })
        assert.is(sent.status, 200, sent.text)
      }
      const stats = (await request(`${sim}/_sim/stats`)).body
      assert.is(stats.sent, 3, 'each send reached the network once')
      assert.is(stats.replaced, 0, 'no two instances fought over the device')
      // Each instance learns who is alive at its heartbeat (every 3 s).
      await waitFor(async () => (await request(`${urls[0]}/health`)).body.instance.live.length === 3, 10_000, 'three live instances')
      // Sends in flight as the group stops: the first on its way to the network, the others waiting for their turn in the device's queue.
      const inFlight = [1, 2, 3, 4].map(i =>
        post(`${urls[0]}/api/create-message`, { authkey, appkey: 'loja', to: '5511988887777', message: `in flight ${i}` }).then(
          answer => answer.status,
          () => 0,
        ),
      )
      await waitFor(async () => (await request(`${sim}/_sim/stats`)).body.sent > 3, 10_000, 'the first send in flight to reach the network')
      // As systemd's control-group stop does: every process of the group gets SIGTERM, the instances
      // once from the kernel and once more from the recipe (ignored: their drain goes on).
      process.kill(-child.pid!, 'SIGTERM')
      assert.equal(await Promise.all(inFlight), [200, 200, 200, 200], 'each send in flight is answered 200: the network outlives the instances draining')
      assert.is(await exited, 0)
      for (const url of [...urls, sim])
        assert.ok(
          await fetch(`${url}/health`).then(
            () => false,
            () => true,
          ),
          `${url} stopped`,
        )
    } finally {
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        // the group is gone already
      }
      await dropNamespace(redis, namespace) // CI runs against the services as a session leaves them
    }
  },
)

test.run()
