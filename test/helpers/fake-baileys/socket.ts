import { EventEmitter } from 'node:events'
import { randomBytes } from 'node:crypto'
import { Boom } from '@hapi/boom'
import { getCodeFromWSError, WAMessageStatus } from '@whiskeysockets/baileys'
import type {
  AnyMessageContent,
  AuthenticationCreds,
  BaileysEventMap,
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
import type { SocketInfo, SocketLike } from '../../../adapters/transport-baileys/types.ts'
import type { FakeNetwork, SentRecord } from './network.ts'

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
    private readonly network: FakeNetwork,
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
    if (!this.network.isMember(group, this.user)) throw new Boom('forbidden', { data: 403 })
    return structuredClone(group)
  }

  async groupGetInviteInfo(code: string): Promise<GroupMetadata> {
    await this.call('groupGetInviteInfo', [code])
    return structuredClone(this.network.groupOfInvite(code))
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
    const group = this.network.groupOfInvite(code)
    if (!this.network.isMember(group, this.user)) group.participants.push({ id: this.user!.id.replace(/:\d+@/, '@'), admin: null })
    return group.id
  }

  async groupInviteCode(jid: string): Promise<string | undefined> {
    await this.call('groupInviteCode', [jid])
    const group = this.network.groups.get(jid)
    if (!group) throw new Boom('item-not-found', { data: 404 })
    const mine = group.participants.find(p => this.network.isMe(p, this.user))
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
}
