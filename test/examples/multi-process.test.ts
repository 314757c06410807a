import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { post } from '../helpers/http.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'
import { linkDevice, startCluster, type Cluster } from '../helpers/cluster.ts'
import { waitFor } from '../helpers/gateway.ts'
import { needing, POSTGRES, REDIS } from '../helpers/requires.ts'

/**
 * Three standalone gateway processes (separate `node` processes, as users run them, in cluster mode
 * on the shared simulated network) on one Redis, then on one PostgreSQL: what must happen once
 * happens once, whichever process serves the request, and the webhooks of a process killed with
 * SIGKILL (or stopped with SIGSTOP, so that only its heartbeat tells) are delivered by the others.
 */
const test = suite('several gateway processes on one store')

const PHONE = '5511999990001'
const backends = [
  { service: REDIS, stop: 'SIGKILL' as const },
  { service: POSTGRES, stop: 'SIGSTOP' as const },
]

for (const backend of backends) {
  const onStore = needing(test, backend.service, `the multi-process tests on ${backend.service.name}`)
  onStore(
    `${backend.service.name}: registrations, device names and OTP codes are unique across 3 processes; webhooks once each; a ${backend.stop === 'SIGKILL' ? 'killed' : 'stopped'} process's webhooks are delivered by the others`,
    async () => {
      const receiver = await startReceiver()
      const cluster = await startCluster(backend.service.value!, 3)
      const procs = cluster.instances
      try {
        const at = (i: number) => procs[i % procs.length]!.url
        await uniqueRegistration(at)
        const authkey = (await post(`${at(0)}/api/auth`, registration('dono@example.com'))).body.data.authkey as string
        await uniqueDevice(at, authkey)
        await otpOnce(cluster, authkey)
        await webhooksOnce(cluster, authkey, receiver)
        await takeover(cluster, authkey, receiver, backend.stop)
      } finally {
        await cluster.stop()
        await receiver.stop()
      }
    },
  )
}

/**
 * 30 concurrent registrations with one e-mail, spread over the 3: exactly one account. The others are
 * 409, or 503 where a store call came late under the load (docs/limits.md, a hung store: nothing
 * registered); then one more, once all are answered, is 409: the one account stands.
 */
async function uniqueRegistration(at: (i: number) => string): Promise<void> {
  const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => post(`${at(i)}/api/auth`, registration('mesmo@example.com'))))
  const statuses = answers.map(answer => answer.status).sort()
  assert.equal(statuses.filter(status => status === 200).length, 1, `one registration wins: ${statuses}`)
  assert.equal(
    statuses.filter(status => status !== 200 && status !== 409 && status !== 503),
    [],
    `the others are 409 (or 503 under load): ${statuses}`,
  )
  for (let i = 0; i < 3; i++) assert.is((await post(`${at(i)}/api/auth`, registration('mesmo@example.com'))).status, 409, 'the e-mail is taken')
}

/**
 * 20 concurrent add-device with one name, spread over the 3: one device (every answer names it). In
 * cluster mode a request that reached an instance while the new device settled on another may be
 * answered 503 with Retry-After (never forwarded twice); tried again, it is answered 200.
 */
async function uniqueDevice(at: (i: number) => string, authkey: string): Promise<void> {
  const add = (i: number) => post(`${at(i)}/api/developer`, { authkey, message: 'recepcao', conecteQR: 'true' })
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => add(i)))
  for (const [i, answer] of answers.entries()) {
    if (answer.status !== 503) continue
    assert.ok(Number(answer.headers.get('retry-after')) > 0, 'a 503 says when to try again')
    answers[i] = await add(i)
  }
  for (const answer of answers) assert.is(answer.status, 200, answer.text)
  const ids = new Set(answers.map(answer => answer.body.id))
  assert.is(ids.size, 1, `one device for one name: ${[...ids]}`)
  for (let i = 0; i < 3; i++) {
    const seen = await post(`${at(i)}/api/developer`, { authkey, message: 'recepcao', checkDispositivo: 'true' })
    assert.is(seen.body?.dispositivo?.id, [...ids][0], seen.text)
  }
}

/** One OTP code, sent through process 0, verified 10 times at once through the other two: exactly one `valid: true`. */
async function otpOnce(cluster: Cluster, authkey: string): Promise<void> {
  await linkDevice(cluster, 0, authkey, 'otp', '5511999990009')
  const to = '5511988887777'
  const sent = await cluster.call(0, '/api/create-message', { appkey: 'otp', authkey, to, enviarOTP: 'true' })
  assert.is(sent.status, 200, sent.text)
  const inbox = (await (await fetch(`${cluster.sim.url}/_sim/inbox/${to}`)).json()) as { text: string }[]
  const code = /\d{6}/.exec(inbox.at(-1)!.text)![0]
  const answers = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      cluster.call(1 + (i % 2), '/api/create-message', { appkey: 'otp', authkey, to, message: 'false', verificarOTP: code }),
    ),
  )
  assert.equal(answers.filter(answer => answer.body.valid === true).length, 1, answers.map(answer => answer.text).join('\n'))
  assert.ok(answers.every(answer => answer.status === 200 || answer.body.valid === false))
}

/** 20 incoming messages on a device: 20 webhook ids at the receiver, none twice. */
async function webhooksOnce(cluster: Cluster, authkey: string, receiver: Receiver): Promise<void> {
  await linkDevice(cluster, 0, authkey, 'entrada', PHONE, receiver.url)
  for (let i = 0; i < 20; i++)
    await post(`${cluster.sim.url}/_sim/send`, { from: `55119777700${String(i).padStart(2, '0')}`, to: PHONE, type: 'text', text: `oi ${i}` })
  await receiver.waitForHooks(20, 20_000)
  await new Promise(resolve => setTimeout(resolve, 2_000)) // a second delivery would show up here
  const ids = receiver.hooks.map(hook => hook.headers['webhook-id'])
  assert.is(ids.length, 20, `${ids.length} deliveries`)
  assert.is(new Set(ids).size, 20)
}

/**
 * The receiver down, 30 events recorded by the process holding a device, then that process killed
 * (or stopped: alive to its host, silent in the store): once the receiver answers again the others
 * deliver all 30 within 30 s. A duplicate would only come from an attempt in flight at the kill.
 */
async function takeover(cluster: Cluster, authkey: string, receiver: Receiver, signal: 'SIGKILL' | 'SIGSTOP'): Promise<void> {
  receiver.hooks.length = 0
  receiver.answer(() => 503)
  const device = await linkDevice(cluster, 1, authkey, 'caida', '5511999990002', receiver.url)
  const holder = (await Promise.all(cluster.instances.map(async proc => ({ proc, held: (await cluster.health(proc)).devices })))).find(h =>
    h.held.includes(device.id),
  )!.proc
  const sent: string[] = []
  for (let i = 0; i < 30; i++)
    sent.push((await post(`${cluster.sim.url}/_sim/send`, { from: '5511977770001', to: '5511999990002', type: 'text', text: `antes da queda ${i}` })).body.id)
  await waitFor(() => new Set(receiver.hooks.map(hook => hook.payload.idMessagem)).size === 30, 20_000, 'an attempt of every event')
  holder.child.kill(signal)
  receiver.hooks.length = 0
  receiver.answer(() => 200)
  const back = Date.now()
  await waitFor(() => new Set(receiver.hooks.map(hook => hook.payload.idMessagem)).size === 30, 30_000, 'the others to deliver all 30 events')
  const took = Date.now() - back
  const delivered = receiver.hooks.map(hook => hook.payload.idMessagem as string)
  assert.equal([...new Set(delivered)].sort(), [...sent].sort())
  console.log(
    `# ${signal}: 30 events delivered by the other processes ${(took / 1000).toFixed(1)} s after the receiver came back (${delivered.length - 30} duplicates)`,
  )
}

function registration(email: string) {
  return { auth: 'registrar', nome: 'Ana', email, senha: 'senha-secreta', telefone: '5511912345678', plano: '1' }
}

test.run()
