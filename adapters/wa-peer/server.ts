import type { IncomingMessage, ServerResponse } from 'node:http'
import Koa from 'koa'
import Router from '@koa/router'
import type { Logger } from 'zapgate'
import type { BinaryNode } from '@whiskeysockets/baileys'
import { simulatorRoutes } from 'zapgate/adapters/transport-memory'
import { loadBaileys } from './baileys.ts'
import { startWaPeerWith, type WaPeer, type WaPeerOptions } from './peer.ts'
import { PeerPhoneNetwork } from './phone-network.ts'

/** Options of waPeerServer. */
export interface WaPeerServerOptions {
  /** TCP port (default 0: a free one). */
  port?: number
  /** Interface to listen on (default 127.0.0.1). */
  host?: string
  /** Where unexpected errors of the phone routes are logged. */
  logger?: Logger
  /** Options of the peer itself (QR refs, history wait, records). */
  peer?: Omit<WaPeerOptions, 'host' | 'port' | 'httpHandler'>
}

/** A running peer server. */
export interface WaPeerServer {
  /** `http://host:port`: what gateways take as GATEWAY_WA_PEER. */
  url: string
  peer: WaPeer
  close(): Promise<void>
}

/**
 * The local WhatsApp peer as a server of its own (`npm run wa-peer`), which several gateway
 * processes join (GATEWAY_WA_PEER=http://host:port, joinWaPeer). One port serves the WebSocket
 * Baileys connects to (`/ws/chat`), the certificate root gateways must trust (`GET /_peer/root`:
 * `{publicKey}` in base64) and the simulator's phone routes (`/_sim`: scan by `{qr, phone}` or
 * `{code, phone}`, send, inbox, phones, unlink by the device's WhatsApp JID, stats). For tests in
 * other processes it also tells what only the peer sees: `GET /_peer/devices/:phone` (the devices
 * linked to that phone's account: JID, connected, logins, ...) and `GET /_peer/records` (`problems`,
 * and `unknownIqs` as `xmlns/type/first child`).
 */
export async function waPeerServer(options: WaPeerServerOptions = {}): Promise<WaPeerServer> {
  const app = new Koa()
  // Koa composes its middleware when asked for its callback: after the routes are added below.
  let handle: ReturnType<Koa['callback']> = async (_, res) => void res.writeHead(503).end()
  const httpHandler = (req: IncomingMessage, res: ServerResponse) => void handle(req, res)
  const peer = await startWaPeerWith(await loadBaileys(), { ...options.peer, port: options.port ?? 0, host: options.host ?? '127.0.0.1', httpHandler })
  const phones = simulatorRoutes(new PeerPhoneNetwork(peer), { logger: options.logger })
  const root = new Router()
    .get('/_peer/root', ctx => void (ctx.body = { publicKey: peer.rootPublicKey.toString('base64'), webSocketPath: '/ws/chat' }))
    .get('/_peer/devices/:phone', ctx => {
      const phone = peer.phones().find(p => p.pn === ctx.params.phone!.replace(/\D/g, ''))
      if (!phone) return void ((ctx.status = 404), (ctx.body = { message: `${ctx.params.phone} is not a phone of this peer` }))
      ctx.body = phone.devices()
    })
    .get('/_peer/records', ctx => {
      const { problems, unknownIqs } = peer.records
      ctx.body = { problems, unknownIqs: unknownIqs.map(iq => iqName(iq)) }
    })
  app.use(phones.routes()).use(phones.allowedMethods())
  app.use(root.routes())
  handle = app.callback()
  return { url: `http://${new URL(peer.url).host}`, peer, close: () => peer.close() }
}

/** An iq as `xmlns/type/first child's tag`, what a test reads of an iq the peer did not know. */
function iqName(iq: BinaryNode): string {
  const first = Array.isArray(iq.content) ? iq.content[0]?.tag : undefined
  return [iq.attrs.xmlns, iq.attrs.type, first].filter(Boolean).join('/')
}
