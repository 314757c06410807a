/**
 * A local WhatsApp peer (zapgate/adapters/wa-peer) for the real Baileys stack: Baileys pairs with it
 * by QR, logs in with the credentials it stored, and exchanges really encrypted 1:1 messages with the
 * peer's phones; the peer answers every iq and injects the stream errors WhatsApp sends. Built from
 * Baileys' own exported primitives (Noise, binary nodes, protos, Curve, its signal repository over
 * libsignal). It proves that a client and Baileys are wired together correctly; it cannot prove what
 * WhatsApp's servers accept. See README.md beside this file.
 *
 * ```ts
 * const peer = await startWaPeer()
 * const restore = peer.trustRoot()             // Baileys now trusts the peer's certificate root
 * // ... a Baileys client with socketConfig.waWebSocketUrl = peer.url shows a QR ...
 * const phone = peer.phone('5511999990001')
 * await phone.scan(qr)                          // pair-success, then 515 and a login
 * phone.sendText('5511988880002', 'hi')         // to the devices linked to another phone
 * ```
 */
import { loadBaileys } from './baileys.ts'
import { startWaPeerWith, type WaPeer, type WaPeerOptions } from './peer.ts'

/** Start a peer on a free loopback port (Baileys, an optional peer package, is imported here). */
export async function startWaPeer(options: WaPeerOptions = {}): Promise<WaPeer> {
  return startWaPeerWith(await loadBaileys(), options)
}

export { WaPeer, type WaPeerOptions, type WaFault, type WaGroupInfo } from './peer.ts'
export { WaPhone, type WaDeviceInfo, type PhoneMediaKind, type PhoneMediaOptions } from './phone-api.ts'
export type { PhoneMessage } from './phone.ts'
export type { MediaHost } from './media.ts'
export type { DeviceReceipt, PhoneSent, PeerStats, PeerRecords } from './model.ts'
export { PeerPhoneNetwork, type PeerPhoneNetworkOptions } from './phone-network.ts'
export { watchLinkChallenges, type WatchedTransport } from './link-challenges.ts'
export { waPeerServer, type WaPeerServer, type WaPeerServerOptions } from './server.ts'
export { joinWaPeer, waPeerWebSocketUrl, type JoinedWaPeer } from './trust.ts'
