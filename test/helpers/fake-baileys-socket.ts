import { EventEmitter } from 'node:events'
import { randomBytes } from 'node:crypto'
import { Boom } from '@hapi/boom'
import { getCodeFromWSError, WAMessageStatus } from '@whiskeysockets/baileys'
import type {
  BaileysEventMap,
  AnyMessageContent,
  AuthenticationCreds,
  Contact,
  GroupMetadata,
  MessageRelayOptions,
  MiscMessageGenerationOptions,
  proto,
  SignalDataSet,
  UserFacingSocketConfig,
  WAMessage,
  WAMessageKey,
} from '@whiskeysockets/baileys'
import type { BaileysTransportOptions } from '../../adapters/transport-baileys/options.ts'
import type { SocketInfo, SocketLike } from '../../adapters/transport-baileys/types.ts'

/**
 * A fake Baileys network for offline tests: `factory` builds FakeBaileysSockets that behave like
 * Baileys 7 at the SocketLike boundary (events on an EventEmitter, `end()` emitting the close, spy
 * methods with canned answers), and the controller holds the simulated world (numbers on WhatsApp,
 * groups, invites, media bytes) plus drivers a test or a contract-suite harness uses: complete a link,
 * deliver incoming messages, read what was sent.
 */
export class FakeBaileys {
  /** Every socket the factory built, oldest first. */
  readonly sockets: FakeBaileysSocket[] = []
  /** Groups by id. */
  readonly groups = new Map<string, GroupMetadata>()
  /** Invite codes to group ids. */
  readonly invites = new Map<string, string>()
  /** Invite codes that were revoked (answer 410 gone). */
  readonly revokedInvites = new Set<string>()
  /** Phone numbers (digits) that are not on WhatsApp. */
  readonly notOnWhatsApp = new Set<string>()
  /** Numbers WhatsApp registers under another form (digits to canonical digits), e.g. Brazil's ninth digit. */
  readonly canonical = new Map<string, string>()
  /** LID (`...@lid`) to PN JID mappings the fake's signal repository knows. */
  readonly lidMappings = new Map<string, string>()
  /** Bytes of received media, by message id, for `downloadMedia`. */
  readonly media = new Map<string, Buffer>()
  /** Errors the next call of a method throws (consumed once). */
  readonly failures = new Map<string, Error>()
  /** How many of the next onWhatsApp calls answer undefined (Baileys' answer when the USync query returns nothing). */
  onWhatsAppSilent = 0
  /** Methods whose calls never settle (to test timeouts). */
  readonly hanging = new Set<string>()
  /** Every downloadMedia call, by message id. */
  readonly downloads: string[] = []
  private groupSeq = 0

  constructor(readonly behaviour: FakeBehaviour = {}) {}

  /** The SocketFactory to inject. */
  readonly factory = (config: UserFacingSocketConfig, info: SocketInfo): FakeBaileysSocket => {
    const socket = new FakeBaileysSocket(this, config, info)
    this.sockets.push(socket)
    socket.boot()
    return socket
  }

  /** Transport options that keep everything offline: this factory, a fixed version, the fake downloader. */
  transportOptions(): Required<Pick<BaileysTransportOptions, 'socketFactory' | 'resolveVersion' | 'downloadMedia'>> {
    return {
      socketFactory: this.factory,
      resolveVersion: async () => [2, 3000, 1],
      downloadMedia: async message => {
        const id = message.key.id ?? ''
        this.downloads.push(id)
        const bytes = this.media.get(id)
        if (!bytes) throw new Boom('media gone', { statusCode: 410 })
        return bytes
      },
    }
  }

  /** Sockets built for a device, oldest first. */
  socketsOf(deviceId: string): FakeBaileysSocket[] {
    return this.sockets.filter(s => s.deviceId === deviceId)
  }

  /** The newest socket of a device. */
  latest(deviceId: string): FakeBaileysSocket | undefined {
    return this.socketsOf(deviceId).at(-1)
  }

  /** The newest socket of a device, or an error. */
  current(deviceId: string): FakeBaileysSocket {
    const socket = this.latest(deviceId)
    if (!socket) throw new Error(`no socket for device ${deviceId}`)
    return socket
  }

  /**
   * Complete the pending link of a device as `phone`: pair-success on the linking socket (creds gain
   * `me` and `account`, `isNewLogin`, then the 515 restart), then open the socket the adapter creates.
   */
  async completeLink(deviceId: string, phone: string, options: { lid?: string } = {}): Promise<FakeBaileysSocket> {
    const linking = this.current(deviceId)
    const count = this.socketsOf(deviceId).length
    linking.pair(phone, options.lid)
    await waitFor(() => this.socketsOf(deviceId).length > count, `a new socket for ${deviceId} after the 515 restart`)
    const socket = this.current(deviceId)
    if (!socket.opened) socket.open()
    await settle()
    return socket
  }

  /** Deliver messages to a device's current socket as one messages.upsert; resolves once handled. */
  async deliver(deviceId: string, messages: WAMessage | WAMessage[], type: 'notify' | 'append' = 'notify'): Promise<void> {
    this.current(deviceId).upsert(Array.isArray(messages) ? messages : [messages], type)
    await settle()
  }

  /** What a device sent, over all its sockets, oldest first. */
  sent(deviceId: string): SentRecord[] {
    return this.socketsOf(deviceId).flatMap(s => s.sent)
  }

  /** Make the next call of `method` (on any socket) throw `error`. */
  failNext(method: string, error: Error): void {
    this.failures.set(method, error)
  }

  /** Add a group; the device's account is a member when `members` includes its phone. */
  addGroup(group: { subject: string; members: { phone?: string; lid?: string; admin?: boolean }[]; invite?: string; id?: string }): GroupMetadata {
    const id = group.id ?? `120363${String(++this.groupSeq).padStart(12, '0')}@g.us`
    const metadata: GroupMetadata = {
      id,
      subject: group.subject,
      owner: undefined,
      addressingMode: (group.members.some(m => m.lid) ? 'lid' : 'pn') as GroupMetadata['addressingMode'],
      participants: group.members.map(m => ({
        id: m.lid ?? `${m.phone}@s.whatsapp.net`,
        ...(m.lid && m.phone ? { phoneNumber: `${m.phone}@s.whatsapp.net` } : {}),
        admin: m.admin ? 'admin' : null,
      })),
    }
    this.groups.set(id, metadata)
    if (group.invite) this.invites.set(group.invite, id)
    return metadata
  }

  /** A new group id (used by groupCreate). */
  nextGroupId(): string {
    return `120363${String(++this.groupSeq).padStart(12, '0')}@g.us`
  }
}

/** How fake sockets behave on their own. */
export interface FakeBehaviour {
  /** An unpaired socket shows a QR right after connecting (default true). */
  autoQr?: boolean
  /** A paired socket opens right after connecting (default true). */
  autoOpen?: boolean
  /** Every socket fails to connect with this ws error code right after `connecting` (e.g. 'ENOTFOUND': no network). */
  failToConnect?: string
}

/** One outgoing call: sendMessage (content) or relayMessage (message and relay options). */
export type SentRecord =
  | { via: 'sendMessage'; jid: string; content: AnyMessageContent; options?: MiscMessageGenerationOptions; id: string }
  | { via: 'relayMessage'; jid: string; message: proto.IMessage; options: MessageRelayOptions; id: string }

/** A fake Baileys socket: Baileys' observable behaviour at the SocketLike boundary, no network. */
export class FakeBaileysSocket implements SocketLike {
  readonly ev = new EventEmitter()
  /** The WebSocket client's events (Baileys re-emits ws's, `unexpected-response` included). */
  readonly ws = new EventEmitter()
  readonly deviceId: string
  /** Every method call, in order. */
  readonly calls: { method: string; args: unknown[] }[] = []
  /** sendMessage and relayMessage calls, in order. */
  readonly sent: SentRecord[] = []
  /** QR strings shown, in order. */
  readonly qrs: string[] = []
  /** When the factory built it (ms since the epoch). */
  readonly createdAt = Date.now()
  closed = false
  opened = false
  /** The error the socket ended with (undefined: ended by `end(undefined)`). */
  endedWith?: Error
  readonly signalRepository: SocketLike['signalRepository']

  constructor(
    private readonly network: FakeBaileys,
    readonly config: UserFacingSocketConfig,
    info: SocketInfo,
  ) {
    this.deviceId = info.deviceId
    this.signalRepository = { lidMapping: { getPNForLID: async lid => network.lidMappings.get(lid) ?? null } }
    this.ev.setMaxListeners(50)
  }

  /** The creds object Baileys would mutate (the adapter's, handed over in the config). */
  get creds(): AuthenticationCreds {
    return this.config.auth.creds
  }

  get user(): Contact | undefined {
    return this.creds.me
  }

  /** Like makeWASocket: `connecting` on the next tick, then a QR (unpaired) or open (paired). */
  boot(): void {
    const { autoQr = true, autoOpen = true, failToConnect } = this.network.behaviour
    process.nextTick(() => {
      if (this.closed) return
      this.update({ connection: 'connecting', receivedPendingNotifications: false, qr: undefined })
      setImmediate(() => {
        if (this.closed) return
        if (failToConnect) return void this.failToConnect(failToConnect)
        if (this.creds.account ? autoOpen : false) this.open()
        else if (!this.creds.account && autoQr) this.showQr()
      })
    })
  }

  // --- Drivers: what WhatsApp does ---

  /** Show a (new) QR; returns it. */
  showQr(qr = `2@fake-ref-${this.qrs.length + 1}-${randomBytes(4).toString('hex')},noise,identity,adv`): string {
    this.qrs.push(qr)
    this.update({ qr })
    return qr
  }

  /** pair-success: creds gain `me`, `account` and `platform`, then `isNewLogin` and the 515 restart. */
  pair(phone: string, lid?: string): void {
    const me: Contact = { id: `${phone}:7@s.whatsapp.net`, name: '~', ...(lid ? { lid: lid.replace('@lid', ':7@lid') } : {}) }
    Object.assign(this.creds, { me, account: { details: Buffer.from('fake-details'), accountSignatureKey: Buffer.alloc(32, 1) }, platform: 'android' })
    this.ev.emit('creds.update', { me: this.creds.me, account: this.creds.account, platform: 'android' })
    this.update({ isNewLogin: true, qr: undefined })
    void this.end(new Boom('Stream Errored (restart required)', { statusCode: 515 }))
  }

  /** Login complete. */
  open(): void {
    this.opened = true
    this.update({ connection: 'open' })
  }

  /** Close the socket the way WhatsApp would, with this DisconnectReason code (or error). */
  close(reason: number | Error): Promise<void> {
    return this.end(typeof reason === 'number' ? new Boom(`Connection Failure (${reason})`, { statusCode: reason }) : reason)
  }

  /**
   * The WebSocket could not connect: the error ws emits (e.g. `getaddrinfo ENOTFOUND web.whatsapp.com`,
   * with its `code`), wrapped as Baileys' mapWebSocketError does: `Boom('WebSocket Error (<message>)',
   * { statusCode: getCodeFromWSError(error), data: error })`, so 408 for every E* code.
   */
  failToConnect(code = 'ENOTFOUND', message = `getaddrinfo ${code} web.whatsapp.com`): Promise<void> {
    const error = Object.assign(new Error(message), { code, errno: -3008, syscall: 'getaddrinfo', hostname: 'web.whatsapp.com' })
    return this.end(new Boom(`WebSocket Error (${error.message})`, { statusCode: getCodeFromWSError(error), data: error }))
  }

  /** The QR references ran out (Baileys' genPairQR): `Boom('QR refs attempts ended', 408)`. */
  expireQr(): Promise<void> {
    return this.end(new Boom('QR refs attempts ended', { statusCode: 408 }))
  }

  /** Another client took the session: `<stream:error><conflict type="replaced"/>` as Baileys ends with it. */
  replaced(): Promise<void> {
    return this.end(new Boom('Stream Errored (conflict)', { statusCode: 440, data: { tag: 'conflict', attrs: { type: 'replaced' } } }))
  }

  /**
   * The WebSocket upgrade is answered with `status` instead of 101 (a proxy's 403, an edge's 503): ws
   * emits `unexpected-response` and, since Baileys listens for it, nothing else: no error, no close.
   */
  refuseUpgrade(status: number): void {
    this.ws.emit('unexpected-response', { method: 'GET' }, { statusCode: status, headers: {}, resume: () => undefined })
  }

  /** WhatsApp's error ack for one of the device's messages, as Baileys reports it (messages.update, status ERROR). */
  errorAck(remoteJid: string, id: string, code: string, extra?: string): void {
    const update = { key: { remoteJid, fromMe: true, id }, update: { status: WAMessageStatus.ERROR, messageStubParameters: extra ? [code, extra] : [code] } }
    this.ev.emit('messages.update', [update] satisfies BaileysEventMap['messages.update'])
  }

  /** Messages arriving (`notify`) or caught up after a reconnect (`append`). */
  upsert(messages: WAMessage[], type: 'notify' | 'append' = 'notify'): void {
    this.ev.emit('messages.upsert', { messages, type })
  }

  /** Baileys writing signal keys through the adapter's key store. */
  async storeKeys(data: SignalDataSet): Promise<void> {
    await this.config.auth.keys.set(data)
  }

  /** Emit a connection.update. */
  update(update: Record<string, unknown>): void {
    this.ev.emit('connection.update', update)
  }

  // --- SocketLike ---

  async end(error: Error | undefined): Promise<void> {
    this.record('end', [error])
    if (this.closed) return
    this.closed = true
    this.endedWith = error
    this.update({ connection: 'close', lastDisconnect: { error, date: new Date() } })
    this.ev.removeAllListeners('connection.update')
  }

  async logout(msg?: string): Promise<void> {
    await this.call('logout', [msg])
    void this.end(new Boom(msg || 'Intentional Logout', { statusCode: 401 }))
  }

  async sendMessage(jid: string, content: AnyMessageContent, options?: MiscMessageGenerationOptions): Promise<WAMessage | undefined> {
    await this.call('sendMessage', [jid, content, options])
    await this.groupParticipants(jid)
    const id = options?.messageId ?? randomBytes(8).toString('hex').toUpperCase()
    this.sent.push({ via: 'sendMessage', jid, content, ...(options ? { options } : {}), id })
    const text = 'text' in content && typeof content.text === 'string' ? { extendedTextMessage: { text: content.text } } : { conversation: '' }
    return { key: { remoteJid: jid, fromMe: true, id }, message: text, messageTimestamp: Math.floor(Date.now() / 1000) }
  }

  async relayMessage(jid: string, message: proto.IMessage, options: MessageRelayOptions): Promise<string> {
    await this.call('relayMessage', [jid, message, options])
    await this.groupParticipants(jid)
    const id = options.messageId ?? randomBytes(8).toString('hex').toUpperCase()
    this.sent.push({ via: 'relayMessage', jid, message, options, id })
    return id
  }

  async readMessages(keys: WAMessageKey[]): Promise<void> {
    await this.call('readMessages', [keys])
  }

  async onWhatsApp(...numbers: string[]): Promise<{ jid: string; exists: boolean }[] | undefined> {
    await this.call('onWhatsApp', numbers)
    if (this.network.onWhatsAppSilent > 0 && this.network.onWhatsAppSilent--) return undefined
    return numbers
      .map(n => n.replace(/\D/g, ''))
      .filter(n => !this.network.notOnWhatsApp.has(n))
      .map(n => ({ jid: `${this.network.canonical.get(n) ?? n}@s.whatsapp.net`, exists: true }))
  }

  async requestPairingCode(phoneNumber: string, customPairingCode?: string): Promise<string> {
    await this.call('requestPairingCode', [phoneNumber, customPairingCode])
    const code = customPairingCode ?? 'FAKECODE'
    Object.assign(this.creds, { pairingCode: code, me: { id: `${phoneNumber}@s.whatsapp.net`, name: '~' } })
    this.ev.emit('creds.update', this.creds)
    return code
  }

  async groupMetadata(jid: string): Promise<GroupMetadata> {
    await this.call('groupMetadata', [jid])
    const group = this.network.groups.get(jid)
    if (!group) throw new Boom('item-not-found', { data: 404 })
    if (!this.isMember(group)) throw new Boom('forbidden', { data: 403 })
    return structuredClone(group)
  }

  async groupGetInviteInfo(code: string): Promise<GroupMetadata> {
    await this.call('groupGetInviteInfo', [code])
    return structuredClone(this.groupOfInvite(code))
  }

  async groupCreate(subject: string, participants: string[]): Promise<GroupMetadata> {
    await this.call('groupCreate', [subject, participants])
    const id = this.network.nextGroupId()
    const me = this.user!.id.replace(/:\d+@/, '@')
    const group: GroupMetadata = {
      id,
      subject,
      owner: me,
      participants: [{ id: me, admin: 'superadmin' }, ...participants.map(p => ({ id: p, admin: null }))],
    }
    this.network.groups.set(id, group)
    this.network.invites.set(`INV${id.slice(6, 14)}`, id)
    return structuredClone(group)
  }

  async groupAcceptInvite(code: string): Promise<string | undefined> {
    await this.call('groupAcceptInvite', [code])
    const group = this.groupOfInvite(code)
    if (!this.isMember(group)) group.participants.push({ id: this.user!.id.replace(/:\d+@/, '@'), admin: null })
    return group.id
  }

  async groupInviteCode(jid: string): Promise<string | undefined> {
    await this.call('groupInviteCode', [jid])
    const group = this.network.groups.get(jid)
    if (!group) throw new Boom('item-not-found', { data: 404 })
    const mine = group.participants.find(p => this.isMe(p))
    if (!mine?.admin) throw new Boom('not-authorized', { data: 401 })
    return [...this.network.invites].find(([, id]) => id === jid)?.[0]
  }

  async updateMediaMessage(message: WAMessage): Promise<WAMessage> {
    await this.call('updateMediaMessage', [message])
    return message
  }

  waUploadToServer: SocketLike['waUploadToServer'] = async (filePath, options) => {
    await this.call('waUploadToServer', [filePath, options])
    return { mediaUrl: `https://mmg.whatsapp.net/fake/${options.mediaType}`, directPath: `/v/t62/fake-${options.mediaType}` }
  }

  // --- Internal helpers ---

  /** Like Baileys' relayMessage to a group: the cached metadata when the config gives it, else a groupMetadata query. */
  private async groupParticipants(jid: string): Promise<void> {
    if (!jid.endsWith('@g.us')) return
    const cached = await this.config.cachedGroupMetadata?.(jid)
    if (!cached?.participants) await this.groupMetadata(jid)
  }

  private record(method: string, args: unknown[]): void {
    this.calls.push({ method, args })
  }

  /** Record a call; throw when closed, when a failure is queued, or hang when asked to. */
  private async call(method: string, args: unknown[]): Promise<void> {
    this.record(method, args)
    if (this.network.hanging.has(method)) await new Promise(() => undefined)
    const failure = this.network.failures.get(method)
    if (failure) {
      this.network.failures.delete(method)
      throw failure
    }
    if (this.closed) throw new Boom('Connection Closed', { statusCode: 428 })
  }

  private isMe(participant: { id: string; phoneNumber?: string }): boolean {
    const me = this.user
    if (!me) return false
    const phone = me.id.split(/[:@]/)[0]
    const lid = me.lid?.split(/[:@]/)[0]
    const user = participant.id.split(/[:@]/)[0]
    return user === phone || user === lid || participant.phoneNumber?.split('@')[0] === phone
  }

  private isMember(group: GroupMetadata): boolean {
    return group.participants.some(p => this.isMe(p))
  }

  private groupOfInvite(code: string): GroupMetadata {
    if (this.network.revokedInvites.has(code)) throw new Boom('gone', { data: 410 })
    const id = this.network.invites.get(code)
    const group = id ? this.network.groups.get(id) : undefined
    if (!group) throw new Boom('not-acceptable', { data: 406 })
    return group
  }
}

/** Let pending callbacks, ticks and promise chains run (a few macrotask turns). */
export async function settle(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise(resolve => setImmediate(resolve))
}

/** Wait until `predicate` holds (polling), or fail after `timeoutMs`. */
export async function waitFor(predicate: () => boolean, what = 'condition', timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 2))
  }
}
