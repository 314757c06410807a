import { spawn } from 'node:child_process'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { qrText } from '../helpers/cluster.ts'
import { waitFor } from '../helpers/gateway.ts'
import { post } from '../helpers/http.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'
import { freePort, startStandalone, watch, type StandaloneServer } from '../helpers/standalone.ts'
import { NODE_TS } from '../helpers/node-ts.ts'

/**
 * One black-box scenario, written against the simulator's phone routes (`/_sim`), run by `npm start`
 * (examples/standalone.ts, with examples/wa-peer-mode.ts on the peer) on each network by changing its environment only: the simulated network (GATEWAY_TRANSPORT=memory),
 * the real Baileys stack against a WhatsApp peer in the same process (GATEWAY_WA_PEER=local), and the
 * real stack joining a peer server of its own (`npm run wa-peer`, GATEWAY_WA_PEER=http://...). Link by
 * a phone's scan, send a text the phone reads, the phone's text as a Texto webhook, a read receipt.
 */
const test = suite('npm start: the same scan, send and receive on the simulated network and on the real Baileys stack')

const root = new URL('../..', import.meta.url).pathname
const SHOP = '5511999990001'
const FRIEND = '5511988880002'

/** How the scenario reaches a network: the gateway's environment, where the phone routes are, how a phone scans. */
interface Network {
  env: Record<string, string>
  /** The base URL of the `/_sim` routes (the gateway's, or the peer server's). */
  phones(gateway: string): string
  scan(authkey: string, qrcode: string): Record<string, unknown>
}

const inProcess = (env: Record<string, string>): Network => ({
  env,
  phones: gateway => gateway,
  scan: authkey => ({ authkey, appkey: 'loja', phone: SHOP }),
})

test('the simulated network (GATEWAY_TRANSPORT=memory)', async () => {
  await scenario(inProcess({ GATEWAY_TRANSPORT: 'memory', GATEWAY_STORE: 'memory://' }))
})

test('the real Baileys stack against a WhatsApp peer in the same process (GATEWAY_TRANSPORT=baileys GATEWAY_WA_PEER=local)', async () => {
  const output = await scenario(inProcess({ GATEWAY_TRANSPORT: 'baileys', GATEWAY_WA_PEER: 'local' }))
  assert.match(output, /"peer":"local WhatsApp peer at ws:\/\/127\.0\.0\.1:\d+\/ws\/chat"/)
})

test('the real Baileys stack joining a peer server (npm run wa-peer, GATEWAY_WA_PEER=http://host:port): scan by the QR text', async () => {
  const port = await freePort()
  const child = spawn(process.execPath, [...NODE_TS, `${root}examples/wa-peer.ts`], {
    cwd: root,
    env: { ...process.env, PORT: String(port), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const { output } = watch(child)
  try {
    await waitFor(() => output().includes('WhatsApp peer listening'), 60_000, `the peer server to listen:\n${output()}`)
    const peerUrl = `http://127.0.0.1:${port}`
    const root = (await fetch(`${peerUrl}/_peer/root`).then(r => r.json())) as { publicKey: string }
    assert.is(Buffer.from(root.publicKey, 'base64').length, 32, 'the peer serves its certificate root')
    await scenario({
      env: { GATEWAY_TRANSPORT: 'baileys', GATEWAY_WA_PEER: peerUrl, GATEWAY_STORE: 'memory://' },
      phones: () => peerUrl,
      scan: (_, qrcode) => ({ qr: qrText(qrcode), phone: SHOP }),
    })
    const stats = (await fetch(`${peerUrl}/_sim/stats`).then(r => r.json())) as any
    assert.equal([stats.peer.pairings, stats.peer.logins, stats.replaced], [1, 1, 0], JSON.stringify(stats))
  } finally {
    child.kill('SIGKILL')
  }
})

test.run()

// --- The scenario ---

/** Run the scenario on `network`; answers what the gateway printed. */
async function scenario(network: Network): Promise<string> {
  let server: StandaloneServer | undefined
  let receiver: Receiver | undefined
  try {
    receiver = await startReceiver()
    server = await startStandalone({ GATEWAY_ALLOW_PRIVATE_URLS: '1', ...network.env })
    const api = (path: string, body: Record<string, unknown>) => post(server!.url + path, body)
    const sim = network.phones(server.url)
    const registered = await api('/api/auth', {
      auth: 'registrar',
      nome: 'Ana',
      email: 'ana@example.com',
      senha: 'segredo1',
      telefone: '5511900000000',
      plano: '1',
    })
    const authkey = registered.body.data.authkey
    const created = await api('/api/v2/qrcode', { authkey, setAppkey: 'loja', webhook: receiver.url })
    assert.is(created.status, 200, created.text)

    const scanned = await post(`${sim}/_sim/scan`, network.scan(authkey, created.body.qrcode))
    assert.equal([scanned.status, scanned.body.message, scanned.body.phone], [200, 'device linked', SHOP], scanned.text)
    const state = async () => (await api('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })).body?.dispositivo
    await waitFor(async () => (await state())?.conectado === true, 20_000, 'the device to connect')
    assert.is((await state()).telefone, SHOP)

    const phoned = await post(`${sim}/_sim/phones`, { phone: FRIEND, pushName: 'Amiga' })
    assert.is(phoned.status, 200, phoned.text)
    const sent = await api('/api/create-message', { appkey: 'loja', authkey, to: FRIEND, message: 'Olá, tudo bem?' })
    assert.is(sent.status, 200, sent.text)
    const inbox = async () => (await fetch(`${sim}/_sim/inbox/${FRIEND}`)).json() as Promise<Record<string, unknown>[]>
    await waitFor(async () => (await inbox()).some(m => m.id === sent.body.id), 20_000, 'the friend to read the message')
    const got = (await inbox()).find(m => m.id === sent.body.id)!
    assert.equal([got.from, got.type, got.text], [SHOP, 'text', 'Olá, tudo bem?'])

    const reply = await post(`${sim}/_sim/send`, { from: FRIEND, to: SHOP, type: 'text', text: 'Quero um orçamento' })
    assert.is(reply.status, 200, reply.text)
    await waitFor(() => receiver!.hooks.some(h => JSON.parse(h.body).idMessagem === reply.body.id), 20_000, 'the Texto webhook')
    const hook = receiver.verified(created.body.webhookSecret).find(p => p.idMessagem === reply.body.id)!
    assert.equal(
      [hook.event, hook.from, hook.chat, hook.to, hook.pushName, hook.text, hook.fromMe],
      ['Texto', FRIEND, FRIEND, SHOP, 'Amiga', 'Quero um orçamento', false],
    )

    const read = await api('/api/create-message', { appkey: 'loja', authkey, to: FRIEND, markRead: reply.body.id })
    assert.is(read.status, 200, read.text)
    await waitFor(async () => (await inbox()).some(m => m.type === 'read' && m.target === reply.body.id), 20_000, 'the read receipt in the inbox')

    const stats = (await fetch(`${sim}/_sim/stats`).then(r => r.json())) as any
    assert.equal([stats.connections, stats.replaced], [1, 0], JSON.stringify(stats))
    assert.ok(stats.sent >= 1 && stats.received >= 1, JSON.stringify(stats))
    return server.output()
  } finally {
    await server?.kill('SIGKILL')
    await receiver?.stop()
  }
}
