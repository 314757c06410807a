import { Agent } from 'node:https'
import Koa from 'koa'
import * as assert from 'uvu/assert'
import { createGateway, type Gateway, type GatewayOptions } from '../../src/index.ts'
import type { TransportEvent } from '../../src/ports/transport.ts'
import { silentLogger } from '../../src/logger.ts'
import { baileysTransport, type BaileysTransport, type BaileysTransportOptions } from '../../adapters/transport-baileys/index.ts'
import { simulatorRoutes, type PhoneNetwork } from '../../adapters/transport-memory/index.ts'
import { PeerPhoneNetwork, startWaPeer, watchLinkChallenges, type WaPeer, type WaPeerOptions } from '../../adapters/wa-peer/index.ts'
import type { Storage } from '../../src/ports/storage.ts'
import { qrText } from './cluster.ts'
import { waitFor } from './gateway.ts'
import { listen, post, type Answer, type Encoding } from './http.ts'
import { startReceiver, type Receiver } from './receiver.ts'
import { RecordingStorage } from './recording-storage.ts'
import { PNG } from './samples.ts'

/**
 * The set-up every real-stack test shares: a local WhatsApp peer whose certificate root this process
 * trusts, the Baileys transport pointed at it (no version lookup, loopback only, quick reconnects),
 * and, for tests through the whole gateway, a served gateway with a webhook receiver, an account and
 * a device linked by QR. One world per suite: a link costs a few hundred ms and CI's budget is tight.
 */

/** The phone the test device is linked to (the shop), as in the simulator's suites. */
export const SHOP = '5511999990001'

/** A peer whose root this process trusts until `close()`. */
export interface TrustedPeer {
  peer: WaPeer
  close(): Promise<void>
}

/** Start a peer (`options`) and install its certificate root in this process' Baileys. */
export async function trustedPeer(options: WaPeerOptions = {}): Promise<TrustedPeer> {
  const peer = await startWaPeer(options)
  const restoreRoot = peer.trustRoot()
  return {
    peer,
    async close() {
      await peer.close()
      restoreRoot()
    },
  }
}

/**
 * The Baileys transport on `peer`: a fixed version (never ask web.whatsapp.com), the peer's WebSocket
 * (loopback only: the real makeWASocket never reaches WhatsApp), its media host (CA and `mediaHosts`) when it runs one,
 * reconnects after 50 ms. `options.socketConfig` adds to (not replaces) that socket configuration.
 */
export function peerTransport(peer: WaPeer, options: Partial<BaileysTransportOptions> = {}): BaileysTransport {
  const { socketConfig, ...rest } = options
  return baileysTransport({
    resolveVersion: async () => [2, 3000, 1],
    reconnect: { initialDelayMs: 50, jitter: 0 },
    ...(peer.media ? { mediaHosts: [peer.media.hostname] } : {}),
    ...rest,
    socketConfig: {
      waWebSocketUrl: peer.url,
      connectTimeoutMs: 5_000,
      ...(peer.media ? { fetchAgent: new Agent({ ca: peer.media.ca }) } : {}),
      ...socketConfig,
    },
  })
}

/** A transport started on its own (no gateway), with the events it emitted. */
export interface StartedTransport {
  transport: BaileysTransport
  events: TransportEvent[]
}

/** Start `peerTransport(peer, options)` on `storage` (default: a fresh RecordingStorage), recording its events. */
export async function startedTransport(
  peer: WaPeer,
  options: Partial<BaileysTransportOptions> = {},
  storage: Storage = new RecordingStorage(),
  logger = silentLogger,
): Promise<StartedTransport> {
  const events: TransportEvent[] = []
  const transport = peerTransport(peer, options)
  await transport.start({ storage, logger, emit: async event => void events.push(event) })
  return { transport, events }
}

/** A gateway served over HTTP with phone routes (`/_sim`: the peer's, or the simulated network's) beside its own. */
export interface RealStackGateway {
  url: string
  gateway: Gateway
  post(path: string, body: Record<string, unknown>, encoding?: Encoding): Promise<Answer>
  stop(): Promise<void>
}

/** Serve a gateway (`options`) on `peerTransport(peer, transport)`, with the phone routes as `GATEWAY_WA_PEER=local` mounts them. */
export async function realStackGateway(
  peer: WaPeer,
  options: GatewayOptions = {},
  transport: Partial<BaileysTransportOptions> = {},
): Promise<RealStackGateway> {
  const watched = watchLinkChallenges(peerTransport(peer, transport))
  const gateway = await createGateway({ allowPrivateUrls: true, ...options, transport: watched.transport })
  return servedWithPhones(gateway, new PeerPhoneNetwork(peer, watched))
}

/** Serve `gateway` over HTTP on a free port with `network`'s phone routes (`/_sim`) beside its own, as the standalone server mounts them. */
export async function servedWithPhones(gateway: Gateway, network: PhoneNetwork): Promise<RealStackGateway> {
  const app = new Koa()
  app.use(simulatorRoutes(network, { findDevices: gateway.findDevices }).routes())
  app.use(gateway.routes())
  const server = await listen(app)
  return {
    url: server.url,
    gateway,
    post: (path, body, encoding) => post(server.url + path, body, encoding),
    async stop() {
      await server.stop()
      await gateway.close()
    },
  }
}

/** A whole real-stack world: peer, gateway, receiver, an account and (unless `link: false`) a device `loja` linked to SHOP. */
export interface RealStack {
  peer: WaPeer
  t: RealStackGateway
  receiver: Receiver
  authkey: string
  device: { id: string; appkey: string }
  /** The `dispositivo` of operation 5 for device `name` (default `loja`). */
  status(name?: string): Promise<Record<string, any>>
  /** The webhook body of message `id`, once it arrived. */
  hookFor(id: string, timeoutMs?: number): Promise<any>
  close(): Promise<void>
}

/** Options of startRealStack. */
export interface RealStackOptions {
  peer?: WaPeerOptions
  gateway?: GatewayOptions
  transport?: Partial<BaileysTransportOptions>
  /** Link the device `loja` to SHOP by QR (default true). */
  link?: boolean
}

/** Start a real-stack world; close() stops everything, also what started before a failure. */
export async function startRealStack(options: RealStackOptions = {}): Promise<RealStack> {
  const trusted = await trustedPeer(options.peer)
  const stack = { peer: trusted.peer } as RealStack
  const closing: (() => Promise<void>)[] = [() => trusted.close()]
  stack.close = async () => {
    for (const close of closing.reverse()) await close()
  }
  try {
    stack.receiver = await startReceiver()
    closing.push(() => stack.receiver.stop())
    stack.t = await realStackGateway(stack.peer, options.gateway, options.transport)
    closing.push(() => stack.t.stop())
    stack.authkey = await register(stack.t)
    stack.status = async (name = 'loja') =>
      (await stack.t.post('/api/developer', { authkey: stack.authkey, message: name, checkDispositivo: 'true' })).body?.dispositivo ?? {}
    stack.hookFor = (id, timeoutMs) => hookFor(stack.receiver, id, timeoutMs)
    if (options.link !== false) stack.device = await linkByQr(stack, 'loja', SHOP)
    return stack
  } catch (err) {
    await stack.close()
    throw err
  }
}

/** A real-stack world with an HTTP server answering every request with a PNG (`images.url`: the cards' and media sends' image URL); close() stops it too. */
export type ImageStack = RealStack & { images: { url: string; stop(): Promise<void> } }

/** Start a real-stack world (startRealStack) and an image server beside it. */
export async function startImageStack(options: RealStackOptions = {}): Promise<ImageStack> {
  const stack = (await startRealStack(options)) as ImageStack
  try {
    const app = new Koa()
    app.use(ctx => {
      ctx.type = 'image/png'
      ctx.body = PNG
    })
    stack.images = await listen(app)
  } catch (err) {
    await stack.close()
    throw err
  }
  const close = stack.close
  stack.close = async () => {
    await stack.images.stop()
    await close()
  }
  return stack
}

/** Create device `name` with operation 3 (webhook: the stack's receiver), let `phone` scan its QR, wait until it is connected. */
export async function linkByQr(
  stack: Pick<RealStack, 't' | 'peer' | 'receiver' | 'authkey'>,
  name: string,
  phone: string,
): Promise<{ id: string; appkey: string }> {
  const created = await stack.t.post('/api/v2/qrcode', { authkey: stack.authkey, setAppkey: name, webhook: stack.receiver.url })
  assert.is(created.status, 200, created.text)
  await stack.peer.phone(phone).scan(qrText(created.body.qrcode))
  await waitFor(
    async () =>
      (await stack.t.post('/api/developer', { authkey: stack.authkey, message: name, checkDispositivo: 'true' })).body?.dispositivo?.conectado === true,
    10_000,
    `${name} connected`,
  )
  return { id: created.body.id, appkey: created.body.appkey }
}

/** The webhook body of message `id` that `receiver` got, once it arrived. */
export async function hookFor(receiver: Receiver, id: string, timeoutMs = 10_000): Promise<any> {
  const find = () => receiver.hooks.map(h => h.payload).find(p => p?.idMessagem === id)
  await waitFor(() => !!find(), timeoutMs, `the webhook of ${id} (got ${JSON.stringify(receiver.hooks.map(h => h.payload?.idMessagem))})`)
  return find()
}

let accounts = 0

/** Register an account through operation 1; its authkey. */
export async function register(t: Pick<RealStackGateway, 'post'>): Promise<string> {
  const answer = await t.post('/api/auth', {
    auth: 'registrar',
    nome: 'Ana',
    email: `ana${++accounts}.${process.pid}@example.com`,
    senha: 'segredo1',
    telefone: '5511900000000',
    plano: '1',
  })
  assert.is(answer.status, 200, answer.text)
  return answer.body.data.authkey
}
