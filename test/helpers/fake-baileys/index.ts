import { Boom } from '@hapi/boom'
import type { Contact, GroupMetadata, UserFacingSocketConfig, WAMessage } from '@whiskeysockets/baileys'
import type { BaileysTransportOptions } from '../../../adapters/transport-baileys/options.ts'
import type { SocketInfo } from '../../../adapters/transport-baileys/types.ts'
import { FakeBaileysSocket } from './socket.ts'
import type { FakeNetwork, SentRecord } from './network.ts'

export { FakeBaileysSocket } from './socket.ts'
export type { SentRecord } from './network.ts'

/**
 * A fake Baileys network for offline tests: `factory` builds FakeBaileysSockets that behave like
 * Baileys 7 at the SocketLike boundary (events on an EventEmitter, `end()` emitting the close, spy
 * methods with canned answers), and the controller holds the simulated world (numbers on WhatsApp,
 * groups, invites, media bytes) plus drivers a test or a contract-suite harness uses: complete a link,
 * deliver incoming messages, read what was sent.
 */
export class FakeBaileys implements FakeNetwork {
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

  /** Whether `participant` is the account `me` (by phone or LID). */
  isMe(participant: { id: string; phoneNumber?: string }, me: Contact | undefined): boolean {
    if (!me) return false
    const phone = me.id.split(/[:@]/)[0]
    const lid = me.lid?.split(/[:@]/)[0]
    const user = participant.id.split(/[:@]/)[0]
    return user === phone || user === lid || participant.phoneNumber?.split('@')[0] === phone
  }

  /** Whether the account `me` is a member of `group`. */
  isMember(group: GroupMetadata, me: Contact | undefined): boolean {
    return group.participants.some(p => this.isMe(p, me))
  }

  /** The group of an invite code (410 when revoked, 406 when unknown, as WhatsApp answers). */
  groupOfInvite(code: string): GroupMetadata {
    if (this.revokedInvites.has(code)) throw new Boom('gone', { data: 410 })
    const id = this.invites.get(code)
    const group = id ? this.groups.get(id) : undefined
    if (!group) throw new Boom('not-acceptable', { data: 406 })
    return group
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
