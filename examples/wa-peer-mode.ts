import type Router from '@koa/router'
import type { Gateway, Logger, Transport } from 'zapgate'
import type { JoinedWaPeer } from 'zapgate/adapters/wa-peer'

/** The Baileys transport on the local WhatsApp peer, as `npm start` runs it with GATEWAY_WA_PEER. */
export interface WaPeerMode {
  transport: Transport
  /** The phone routes (`/_sim`), served beside the gateway's: in process (`local`) only; a peer server serves its own. */
  phoneRouter?(gateway: Gateway): Router
  /** What the start-up line logs. */
  describe: string
  close(): Promise<void>
}

/**
 * GATEWAY_WA_PEER=local: a peer in this process, its phone routes mounted beside the gateway's as
 * in memory mode (scan by appkey too). GATEWAY_WA_PEER=http://host:port: join a peer server
 * (`npm run wa-peer`) shared by several gateway processes. Either way the real Baileys stack runs,
 * trusting the peer's certificate root instead of WhatsApp's: offline tests only.
 */
export async function waPeerMode(where: string, logger: Logger): Promise<WaPeerMode> {
  const { baileysTransport } = await import('zapgate/adapters/transport-baileys')
  const peerKit = await import('zapgate/adapters/wa-peer')
  const { simulatorRoutes } = await import('zapgate/adapters/transport-memory')
  // No version lookup on the web and no reachability probe of WhatsApp: the peer is the network.
  const onPeer = (webSocketUrl: string) =>
    baileysTransport({ resolveVersion: async () => [2, 3000, 1], checkReachability: false, socketConfig: { waWebSocketUrl: webSocketUrl } })
  if (where === 'local') {
    const peer = await peerKit.startWaPeer()
    const restoreRoot = peer.trustRoot()
    const watched = peerKit.watchLinkChallenges(onPeer(peer.url))
    const network = new peerKit.PeerPhoneNetwork(peer, watched)
    return {
      transport: watched.transport,
      phoneRouter: gateway => simulatorRoutes(network, { findDevices: gateway.findDevices, logger }),
      describe: `local WhatsApp peer at ${peer.url}`,
      async close() {
        await peer.close()
        restoreRoot()
      },
    }
  }
  checkWaPeer(where)
  // The server starts at once; devices connect and link once the peer's root is trusted (retried each second).
  let stopped = false
  let joined: JoinedWaPeer | undefined
  const joining = (async () => {
    for (let attempt = 0; !stopped; attempt++) {
      try {
        return (joined = await peerKit.joinWaPeer(where))
      } catch (err) {
        if (attempt === 0) logger.warn({ err }, `waiting for the WhatsApp peer server at ${where}`)
        await new Promise(resolve => setTimeout(resolve, 1000).unref())
      }
    }
  })()
  return {
    transport: afterJoining(onPeer(peerKit.waPeerWebSocketUrl(where)), joining),
    describe: `WhatsApp peer server ${where}`,
    async close() {
      stopped = true
      joined?.restoreRoot()
    },
  }
}

/** `transport` whose connects and links wait until `joined` (the peer's root trusted): Baileys must not handshake before. */
function afterJoining(transport: Transport, joined: Promise<unknown>): Transport {
  return new Proxy(transport, {
    get(target, key) {
      const value = Reflect.get(target, key, target)
      if (key !== 'connect' && key !== 'link') return typeof value === 'function' ? value.bind(target) : value
      return async (...args: unknown[]) => {
        await joined
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
}

/** `GATEWAY_WA_PEER` is `local` or the http(s) URL of a peer server; anything else stops the start, naming the variable. */
export function checkWaPeer(where: string): void {
  if (where !== 'local' && !/^https?:\/\//.test(where))
    throw new Error(`GATEWAY_WA_PEER must be local or http://host:port of npm run wa-peer, not ${JSON.stringify(where)}`)
}
