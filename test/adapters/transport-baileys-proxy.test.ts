import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { HttpsProxyAgent } from 'https-proxy-agent'
import { SocksProxyAgent } from 'socks-proxy-agent'
import { TransportError, type TransportEvent } from '../../src/ports/transport.ts'
import type { Logger } from '../../src/logger.ts'
import { baileysTransport, type BaileysTransportOptions } from '../../adapters/transport-baileys/index.ts'
import { ProxyAgents } from '../../adapters/transport-baileys/proxy.ts'
import { defaultVersionResolver } from '../../adapters/transport-baileys/version.ts'
import { setupBaileys } from '../helpers/baileys-setup.ts'
import { startProxy } from '../helpers/baileys-proxy.ts'
import { waitFor } from '../helpers/fake-baileys/index.ts'
import { startWaPeer } from '../../adapters/wa-peer/index.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'

const proxy = suite('Baileys transport through a proxy (global or per device)')

/** A logger that keeps every line as `level: message`. */
function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = []
  const at = (level: string) => (obj: unknown, msg?: string) => void lines.push(`${level}: ${typeof obj === 'string' ? obj : msg}`)
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
}

proxy('the proxy carries each socket (agent) and its media uploads (fetchAgent): one URL for all, or one per device', async () => {
  const perDevice: Record<string, string | undefined> = { a: 'http://user:secret@proxy-a.example:3128', b: 'socks5://proxy-b.example:1080', c: undefined }
  const s = await setupBaileys({ proxy: deviceId => perDevice[deviceId] })
  for (const id of ['a', 'b', 'c']) await s.transport.link(id, {})
  const config = (id: string) => s.fake.current(id).config
  assert.instance(config('a').agent, HttpsProxyAgent)
  assert.is((config('a').agent as unknown as HttpsProxyAgent<string>).proxy.href, 'http://user:secret@proxy-a.example:3128/')
  assert.is(config('a').fetchAgent, config('a').agent, 'uploads go through the same agent')
  assert.instance(config('b').agent, SocksProxyAgent)
  assert.not.ok('agent' in config('c') || 'fetchAgent' in config('c'), 'a device without a proxy connects directly')
  await s.transport.stop()

  const global = await setupBaileys({ proxy: 'http://proxy.example:8080' })
  await global.transport.link('x', {})
  await global.transport.link('y', {})
  assert.is(global.fake.current('x').config.agent, global.fake.current('y').config.agent, 'one agent per proxy URL, shared')
  await global.transport.stop()
})

async function realStack(url: string, options: Partial<BaileysTransportOptions>) {
  const events: TransportEvent[] = []
  const transport = baileysTransport({
    resolveVersion: async () => [2, 3000, 1],
    socketConfig: { waWebSocketUrl: url, connectTimeoutMs: 5_000, qrTimeout: 200 },
    linkTimeoutMs: 5_000,
    ...options,
  })
  await transport.start({ storage: new RecordingStorage(), logger: recordingLogger(), emit: async event => void events.push(event) })
  return { transport, events }
}

proxy('the real Baileys stack reaches the QR through an http proxy (a CONNECT tunnel to the WhatsApp endpoint)', async () => {
  const server = await startWaPeer()
  const restoreRoot = server.trustRoot()
  const tunnel = await startProxy()
  const { transport } = await realStack(server.url, { proxy: tunnel.url })
  try {
    const challenge = await transport.link('dev', {})
    assert.is(challenge.kind, 'qr')
    assert.equal(tunnel.tunnels, [new URL(server.url).host])
    assert.is(server.records.payloads.length, 1, 'the handshake went through the tunnel')
  } finally {
    await transport.stop()
    restoreRoot()
    await tunnel.close()
    await server.close()
  }
})

proxy('a proxy that refuses the tunnel (403): link() answers unreachable at once, naming the HTTP status, instead of hanging', async () => {
  const server = await startWaPeer()
  const tunnel = await startProxy()
  tunnel.refuse = 403
  // The watch and the link time-out far off: only the refused tunnel can answer within the bound.
  const { transport } = await realStack(server.url, { proxy: tunnel.url, openTimeoutMs: 30_000, linkTimeoutMs: 30_000 })
  try {
    const started = Date.now()
    const error = await transport.link('dev', {}).then(
      () => undefined,
      (e: unknown) => e,
    )
    assert.instance(error, TransportError)
    assert.is((error as TransportError).code, 'unreachable')
    assert.match((error as Error).message, /HTTP 403 at the WebSocket upgrade/)
    assert.ok(Date.now() - started < 15_000, `in ${Date.now() - started} ms, not at the 30 s watch`)
  } finally {
    await transport.stop()
    await tunnel.close()
    await server.close()
  }
})

proxy('the default version lookup goes through the proxy; a refused tunnel falls back to the bundled version with a warning', async () => {
  const site = createServer((_, res) =>
    res.writeHead(200).end('self.__swData=JSON.parse(/*BTDS*/"{\\"dynamic_data\\":{\\"SiteData\\":{\\"client_revision\\":1023456789}}}")'),
  )
  await new Promise<void>(resolve => site.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(site.address() as AddressInfo).port}/sw.js`
  const tunnel = await startProxy()
  const agents = new ProxyAgents()
  const logger = recordingLogger()
  try {
    const resolve = defaultVersionResolver(logger, {}, url)
    assert.equal(await resolve({ agent: await agents.get(tunnel.url) }), [2, 3000, 1023456789])
    assert.equal(tunnel.tunnels, [new URL(url).host])
    tunnel.refuse = 403
    agents.destroy() // pooled tunnels would be reused: a new agent asks the proxy again
    assert.is(await resolve({ agent: await agents.get(tunnel.url) }), undefined)
    assert.match(logger.lines.join('\n'), /warn: could not read the current WhatsApp Web version; using the bundled one/)
    assert.equal(await defaultVersionResolver(logger, { WA_VERSION: '2.3000.5' }, url)({}), [2, 3000, 5], 'WA_VERSION wins, without a request')
  } finally {
    agents.destroy()
    await tunnel.close()
    await new Promise(resolve => site.close(resolve))
  }
})

proxy('checkReachability logs within seconds at start whether WhatsApp can be reached (through the proxy)', async () => {
  const server = await startWaPeer()
  const tunnel = await startProxy()
  const closed = await startProxy()
  await closed.close() // nothing listens there any more
  try {
    for (const [via, expected] of [
      [tunnel.url, /^info: WhatsApp is reachable from this server$/],
      [closed.url, /^error: WhatsApp cannot be reached from this server \(.*ECONNREFUSED.*\); devices cannot connect or link until it can$/],
    ] as const) {
      const logger = recordingLogger()
      const transport = baileysTransport({ checkReachability: true, proxy: via, socketConfig: { waWebSocketUrl: server.url } })
      await transport.start({ storage: new RecordingStorage(), logger, emit: async () => undefined })
      await waitFor(() => logger.lines.some(line => /reach/.test(line)), 'the reachability line', 5_000)
      assert.match(logger.lines.find(line => /reach/.test(line)) ?? '', expected)
      await transport.stop()
    }
  } finally {
    await tunnel.close()
    await server.close()
  }
})

proxy.run()
