import { randomBytes, randomInt } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { Baileys } from './baileys.ts'
import { Connection } from './connection.ts'
import { splitJid } from './messaging.ts'
import { MediaHost } from './media.ts'
import type { Account, LinkedDevice, PeerCore, PeerRecords, PeerStats } from './model.ts'
import { serverIdentity, type ServerIdentity } from './noise.ts'
import { PhoneSignal, type KeyBundle } from './phone.ts'
import { WaPhone } from './phone-api.ts'
import { trustRootKey } from './trust.ts'
import { refuseUpgrade } from './websocket.ts'

/** Options of the peer. */
export interface WaPeerOptions {
  /** Address to listen on (default 127.0.0.1) and port (default: a free one). */
  host?: string
  port?: number
  /** QR refs offered to each registering connection: how many (default 3, random), or these exact refs. Baileys ends the link when they run out. */
  qrRefs?: number | string[]
  /** After each login, send a history-sync notification that Baileys' default filter drops, ending its 20 s wait (default true). */
  endHistoryWait?: boolean
  /** After each login's offline messages, send the offline marker `<ib><offline/>` (default true); false: Baileys buffers its events (a backlog still arriving) until its own 30 s time-out. */
  offlineMarker?: boolean
  /** Run the local media host (HTTPS with a self-signed certificate made by the `openssl` command) and answer `media_conn` with it (default false). */
  media?: boolean
  /** At most this many received nodes are kept in `records.nodes` (default 10,000). */
  recordLimit?: number
  /** Serves the HTTP requests that are not WebSocket upgrades (default: 426), e.g. the phone routes of a peer server. */
  httpHandler?: (req: IncomingMessage, res: ServerResponse) => void
}

/** A group as `WaPeer.group()` reports it. */
export interface WaGroupInfo {
  /** `<digits>@g.us` */
  jid: string
  subject: string
  /** Members' phone numbers (digits). */
  members: string[]
  /** Admins' phone numbers (the creator is one). */
  admins: string[]
  inviteCode: string
  /** Phone numbers that asked to join by invite, waiting for an admin (empty unless the group requires approval). */
  joinRequests: string[]
}

/** A fault the peer injects on a device's connection. */
export type WaFault =
  /** Stream error 515: the client restarts its connection. */
  | 'restart'
  /** Stream error conflict/replaced: Baileys closes with 440. */
  | 'replaced'
  /** The phone unlinks the device: stream error 401, later logins fail. */
  | 'logged-out'
  /** `<xmlstreamend/>`: Baileys closes with 428. */
  | 'stream-end'
  /** The connection goes silent (nothing answered, nothing delivered): Baileys' keep-alive ends it with 408. */
  | 'silence'
  /** The TCP connection is cut. */
  | 'drop'

/**
 * A local WhatsApp peer for the real Baileys stack: the server side (WebSocket, Noise with a
 * certificate root of its own, pairing, login, iqs, usync, key bundles, message routing, receipts,
 * stream errors) and the phones (each an account with its own signal identity, through Baileys'
 * signal repository over libsignal). Start it with `startWaPeer()`; point Baileys at `url`
 * (`socketConfig.waWebSocketUrl`) after `trustRoot()`.
 */
export class WaPeer {
  /** `ws://host:port/ws/chat`, for Baileys' `waWebSocketUrl`. */
  readonly url: string
  /** The public key of the peer's certificate root (what `trustRoot()` installs as WA_CERT_DETAILS.PUBLIC_KEY). */
  readonly rootPublicKey: Buffer
  /** Counters (connections, logins, pairings, `replaced`, ...). */
  readonly stats: PeerStats
  /** What the peer recorded: payloads, nodes, unknown iqs, problems. */
  readonly records: PeerRecords

  /** @internal */
  constructor(
    private readonly lib: Baileys,
    private readonly state: PeerState,
    private readonly server: Server,
  ) {
    const { port, address } = server.address() as AddressInfo
    this.url = `ws://${address}:${port}/ws/chat`
    this.rootPublicKey = Buffer.from(state.identity.root.public)
    this.stats = state.core.stats
    this.records = state.core.records
  }

  /** The media host (with `media: true`): its certificate to trust (`ca`), and `download()` to read a media message as a phone does. */
  get media(): MediaHost | undefined {
    return this.state.core.media
  }

  /**
   * Make Baileys (in this process) trust the peer's certificate root; returns the function that
   * restores the real root. Baileys keeps the root in a module-level constant, so while it is
   * installed every Baileys socket of the process trusts this peer and not WhatsApp.
   */
  trustRoot(): () => void {
    return trustRootKey(this.lib, this.rootPublicKey)
  }

  /**
   * The phone of `pn` (digits; created on first use, with `lid` or a random LID, and a fresh signal
   * identity). `addressing: 'lid'` makes its messages come from its LID (with `sender_pn`), as
   * WhatsApp addresses more and more 1:1 chats; the default is its phone number (with `sender_lid`).
   */
  phone(pn: string, options: { lid?: string; pushName?: string; addressing?: 'pn' | 'lid' | 'hidden' } = {}): WaPhone {
    const digits = pn.replace(/\D/g, '')
    const existing = this.state.phones.get(digits)
    if (existing) return existing
    const lidUser = (options.lid ?? `${randomInt(100_000, 999_999)}${randomInt(100_000_000, 999_999_999)}`).replace(/@lid$/, '')
    const account: Account = {
      pn: digits,
      lidUser,
      jid: `${digits}@s.whatsapp.net`,
      lidJid: `${lidUser}@lid`,
      pushName: options.pushName ?? `Phone ${digits.slice(-4)}`,
      addressing: options.addressing ?? 'pn',
      signal: new PhoneSignal(this.lib),
      devices: new Map(),
      nextDevice: 1,
      inbox: [],
      receipts: [],
      acks: [],
      sent: [],
    }
    this.state.accounts.set(digits, account)
    this.state.accounts.set(lidUser, account)
    const phone = new WaPhone(this.state.core, account)
    this.state.phones.set(digits, phone)
    return phone
  }

  /** Every phone of the peer, in order of first use. */
  phones(): WaPhone[] {
    return [...this.state.phones.values()]
  }

  /** A group of the peer as members see it (undefined when there is none): subject, members (phone numbers) and admins, invite code. */
  group(jid: string): WaGroupInfo | undefined {
    const group = this.state.core.groups.get(jid)
    if (!group) return undefined
    const members = [...group.members.values()]
    return {
      jid: group.jid,
      subject: group.subject,
      members: members.map(m => m.account.pn),
      admins: members.filter(m => m.admin).map(m => m.account.pn),
      inviteCode: group.inviteCode,
      joinRequests: [...(group.joinRequests ?? [])],
    }
  }

  /** The group requires admin approval from now on: a join by invite becomes a request (`membership_approval_request`), the device no member. */
  requireJoinApproval(jid: string): void {
    const group = this.state.core.groups.get(jid)
    if (!group) throw new Error(`no group ${jid}`)
    group.joinRequests ??= new Set()
  }

  /** Refuse every WebSocket upgrade with this HTTP status from now on, as an edge or a proxy in front of WhatsApp does (undefined: accept again). */
  refuseUpgrades(status: number | undefined): void {
    this.state.refuse = status
  }

  /** From now on, ack every message from a device with this error code (e.g. 463, 479) and deliver none; undefined: deliver again. */
  failMessages(code: number | undefined): void {
    this.state.core.failMessages = code
  }

  /** Inject a fault on the connection of the device `jid` (PN or LID form); false when it has none. */
  fault(jid: string, fault: WaFault): boolean {
    const device = this.state.core.deviceByJid(jid)
    const channel = device?.channel
    if (!device || !channel || channel.closed) return false
    if (fault === 'restart') channel.streamError({ code: '515' })
    else if (fault === 'replaced') channel.streamError({ child: { tag: 'conflict', attrs: { type: 'replaced' } } })
    else if (fault === 'logged-out') this.phone(device.account.pn).unlink(device.jid)
    else if (fault === 'stream-end') (channel as Connection).endStream()
    else if (fault === 'silence') channel.silence()
    else channel.cut()
    return true
  }

  /** Close every connection and the listener. */
  async close(): Promise<void> {
    for (const socket of this.state.sockets) socket.destroy()
    await new Promise<void>(resolve => this.server.close(() => resolve()))
    await this.state.core.media?.close()
  }
}

/** Start a peer on a free port (Baileys, an optional peer package, is loaded here). */
export async function startWaPeerWith(lib: Baileys, options: WaPeerOptions = {}): Promise<WaPeer> {
  const state = peerState(lib, options)
  if (options.media) state.core.media = await MediaHost.start(lib)
  const server = createServer(options.httpHandler ?? ((_, res) => res.writeHead(426).end()))
  server.on('upgrade', (req: IncomingMessage, socket: Socket) => {
    state.core.stats.upgrades++
    state.sockets.add(socket)
    socket.on('close', () => state.sockets.delete(socket))
    socket.on('error', () => socket.destroy())
    if (state.refuse) return refuseUpgrade(socket, state.refuse)
    new Connection(state.core, socket, state.identity, { endHistoryWait: options.endHistoryWait ?? true, offlineMarker: options.offlineMarker ?? true }, req)
  })
  await new Promise<void>(resolve => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve))
  return new WaPeer(lib, state, server)
}

// --- Internal helpers ---

interface PeerState {
  core: PeerCore
  identity: ServerIdentity
  accounts: Map<string, Account>
  phones: Map<string, WaPhone>
  sockets: Set<Socket>
  refuse?: number
}

function peerState(lib: Baileys, options: WaPeerOptions): PeerState {
  const accounts = new Map<string, Account>()
  const refCount = options.qrRefs ?? 3
  const core: PeerCore = {
    lib,
    stats: { upgrades: 0, connections: 0, logins: 0, refusedLogins: 0, pairings: 0, replaced: 0, decrypted: 0, phoneMessages: 0 },
    records: { payloads: [], nodes: [], unknownIqs: [], problems: [] },
    recordLimit: options.recordLimit ?? 10_000,
    qrRefs: new Map(),
    codeRequests: new Map(),
    accountByUser: user => accounts.get(user),
    allDevices: () => [...new Set(accounts.values())].flatMap(account => [...account.devices.values()]),
    deviceByJid(jid) {
      const { user, device } = splitJid(jid)
      return accounts.get(user)?.devices.get(device)
    },
    newRefs: () => (Array.isArray(refCount) ? [...refCount] : Array.from({ length: refCount }, () => `2@${randomBytes(18).toString('base64')}`)),
    deviceBundle: bundleOf,
    now: () => String(Math.floor(Date.now() / 1000)),
    groups: new Map(),
  }
  return { core, identity: serverIdentity(lib), accounts, phones: new Map(), sockets: new Set() }
}

/** A bundle of a linked device from its uploaded keys; each one-time pre-key is handed out once. */
function bundleOf(device: LinkedDevice): KeyBundle {
  const next = device.preKeys.entries().next()
  let preKey: KeyBundle['preKey']
  if (!next.done) {
    const [keyId, publicKey] = next.value
    device.preKeys.delete(keyId)
    preKey = { keyId, publicKey }
  }
  return { registrationId: device.registrationId, identityKey: device.identityKey, signedPreKey: device.signedPreKey, ...(preKey ? { preKey } : {}) }
}
