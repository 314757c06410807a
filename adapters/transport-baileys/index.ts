/**
 * The Baileys transport (zapgate/adapters/transport-baileys): the real WhatsApp network, the gateway's
 * default. Baileys is imported on first use, so hosts on another transport never load it.
 */
import { BaileysTransport } from './transport.ts'
import type { BaileysTransportOptions } from './options.ts'

/** A Transport over WhatsApp through Baileys 7 (`@whiskeysockets/baileys@7.0.0-rc14`). */
export function baileysTransport(options?: BaileysTransportOptions): BaileysTransport {
  return new BaileysTransport(options)
}

export { BaileysTransport } from './transport.ts'
export type { BaileysTransportOptions, BaileysLogLevel, ReconnectOptions, ProxyOption } from './options.ts'
export type { SocketLike, SocketEvents, SocketWire, SocketFactory, SocketInfo, MediaDownloader, BaileysModule } from './types.ts'
export { CloseCode, closeAction, closeCause, ConnectionProblem, type CloseAction, type CloseCause } from './policy.ts'
export { parseInviteCode, brazilianAlternative } from './jid.ts'
