import type { BinaryNode, proto } from '@whiskeysockets/baileys'
import type { Baileys } from './baileys.ts'
import type { KeyBundle, PhoneMessage, PhoneSignal } from './phone.ts'

/**
 * The peer's state, shared by its parts: accounts (a phone number, its LID and its phone), the
 * companion devices linked to them, the open connections, and what the peer records for tests.
 */

/** A receipt a device sent about a message: delivery (no type), read, or one of WhatsApp's other kinds. */
export interface DeviceReceipt {
  /** The message id the receipt is about (the first one when it lists several). */
  id: string
  /** Every id it covers. */
  ids: string[]
  /** `delivery` when the stanza has no type; else its type (`read`, `read-self`, `sender`, `inactive`, `hist_sync`, ...). */
  type: string
  /** The device that sent it. */
  fromDevice: string
  at: number
}

/** What a phone sent, as the peer delivers it. */
export interface PhoneSent {
  id: string
  /** The recipient account's phone number. */
  to: string
  message: proto.IMessage
}

/** One companion device (a Baileys client) linked to an account: its keys as registered and uploaded. */
export interface LinkedDevice {
  account: Account
  /** Device number (1, 2, ...). */
  device: number
  /** `<pn>:<device>@s.whatsapp.net` */
  jid: string
  /** `<lid>:<device>@lid` */
  lid: string
  /** The Noise static public key the device registered with (a login must present it). */
  noiseKey: Buffer
  /** Its signal identity (32 bytes), registration id and signed pre-key from the registration payload (rotations update it). */
  identityKey: Buffer
  registrationId: number
  signedPreKey: { keyId: number; publicKey: Buffer; signature: Buffer }
  /** One-time pre-keys uploaded and not handed out yet. */
  preKeys: Map<number, Buffer>
  keyIndex: number
  /** The connection it is logged in on, if any. */
  channel?: Channel
  /** Messages waiting for the device to come online (delivered as offline messages at its next login). */
  waiting: Outgoing[]
  /** Logins so far (the first one after pairing is 1). */
  logins: number
  /** Logged in and past its offline delivery: new messages go straight to it. */
  online: boolean
}

/** A message the peer will deliver to a device: encrypted at delivery time by `encrypt`. */
export interface Outgoing {
  id: string
  build(device: LinkedDevice): Promise<BinaryNode>
}

/** An account: a phone number, its LID, and its phone (device 0) with a signal identity of its own. */
export interface Account {
  /** Digits only. */
  pn: string
  /** The LID user (digits). */
  lidUser: string
  /** `<pn>@s.whatsapp.net` */
  jid: string
  /** `<lid>@lid` */
  lidJid: string
  pushName: string
  /** How this phone's messages are addressed: from its phone number (with `sender_lid`), from its LID (with `sender_pn`, as WhatsApp does more and more), or from its LID alone (`hidden`: a hidden number). */
  addressing: 'pn' | 'lid' | 'hidden'
  signal: PhoneSignal
  /** Companion devices by device number. */
  devices: Map<number, LinkedDevice>
  nextDevice: number
  /** What the phone decrypted, in order. */
  inbox: PhoneMessage[]
  /** Receipts devices sent to this phone, in order. */
  receipts: DeviceReceipt[]
  /** Acks devices sent for messages this phone sent them. */
  acks: { id: string; fromDevice: string; error?: string }[]
  /** Messages this phone sent. */
  sent: PhoneSent[]
}

/** A member of a group: its account and role (`superadmin` for the creator, `admin`, or none). */
export interface GroupMember {
  account: Account
  admin?: 'superadmin' | 'admin'
}

/** A group in phone-number addressing: its members, invite code, and who already holds whose sender key. */
export interface PeerGroup {
  /** `<digits>@g.us` */
  jid: string
  subject: string
  description?: string
  creator: Account
  /** Creation time (seconds). */
  creation: number
  /** Members by phone number. */
  members: Map<string, GroupMember>
  inviteCode: string
  /** Set when the group requires admin approval: the phone numbers that asked to join by invite (not members until approved). */
  joinRequests?: Set<string>
  /** `<sender pn> <device jid>` pairs: the device got that phone's sender key distribution message. */
  senderKeysSent: Set<string>
}

/** One client connection as the rest of the peer sees it. */
export interface Channel {
  readonly id: number
  /** The device logged in on it (after a login), else undefined. */
  device?: LinkedDevice
  /** The registration payload, for a connection that registers (shows QR codes). */
  registration?: Registration
  /** Send a node (dropped while the connection is silenced or closed). */
  send(node: BinaryNode): void
  /** Send an iq and wait for its answer. */
  query(node: BinaryNode, timeoutMs?: number): Promise<BinaryNode>
  /** `<stream:error>` with a code or a child, then close. */
  streamError(error: { code?: string; child?: BinaryNode }): void
  /** Stop answering anything (a silent network: Baileys' keep-alive then gives up with 408). */
  silence(): void
  /** Stop (nothing more is sent or read) and close the TCP connection after a grace period, unless the client closes first. */
  close(): void
  /** Cut the TCP connection at once. */
  cut(): void
  readonly closed: boolean
}

/** A registering client: its Noise key and the signal keys of its registration payload. */
export interface Registration {
  noiseKey: Buffer
  identityKey: Buffer
  registrationId: number
  signedPreKey: { keyId: number; publicKey: Buffer; signature: Buffer }
  /** The QR refs offered (the first is shown first). */
  refs: string[]
}

/** A registering connection that asked to be linked by pairing code. */
export interface CodeRequest {
  channel: Channel
  /** The phone number the code is for (digits). */
  pn: string
  ref: string
  /** salt (32) | iv (16) | the companion's ephemeral public key, AES-CTR under a key derived from the code. */
  wrappedEphemeral: Buffer
  /** Set by the phone that entered the code: handles `companion_finish`. */
  finish?: (iq: import('@whiskeysockets/baileys').BinaryNode) => boolean
}

/** Counters a test or a bench reads. */
export interface PeerStats {
  /** WebSocket upgrades received (refused or not). */
  upgrades: number
  /** Handshakes completed (registrations and logins). */
  connections: number
  /** Logins accepted. */
  logins: number
  /** Logins refused (unknown device, wrong Noise key, unlinked). */
  refusedLogins: number
  /** Devices paired. */
  pairings: number
  /** Connections closed because the same device logged in again (conflict/replaced). */
  replaced: number
  /** Messages from devices that the phones decrypted. */
  decrypted: number
  /** Messages phones sent that reached at least one linked device (delivered or waiting). */
  phoneMessages: number
}

/** What the peer records for tests. */
export interface PeerRecords {
  /** ClientPayloads of every handshake, in order. */
  payloads: proto.ClientPayload[]
  /** Every node devices sent, in order (bounded by the `recordLimit` option). */
  nodes: BinaryNode[]
  /** iqs the peer does not know (answered with an error 501). */
  unknownIqs: BinaryNode[]
  /** What went wrong on the peer's side: failed decryptions, rejected signatures, refused logins. */
  problems: string[]
}

/** The state every part of the peer works on. */
export interface PeerCore {
  lib: Baileys
  stats: PeerStats
  records: PeerRecords
  recordLimit: number
  accountByUser(user: string): Account | undefined
  /** Every linked device of every account. */
  allDevices(): LinkedDevice[]
  /** The linked device with `jid` (PN or LID form, with device). */
  deviceByJid(jid: string): LinkedDevice | undefined
  /** Connections that registered and show a QR, by ref. */
  qrRefs: Map<string, Channel>
  /** Pairing-code requests (`companion_hello`) waiting for their phone, by the phone number they name. */
  codeRequests: Map<string, CodeRequest>
  /** New QR refs for a registering connection. */
  newRefs(): string[]
  /** Bundles (one-time pre-keys handed out once) for a linked device. */
  deviceBundle(device: LinkedDevice): KeyBundle
  /** While set, messages from devices are acked with this error code and not delivered. */
  failMessages?: number
  /** Timestamps (seconds) as the server writes them. */
  now(): string
  /** Groups by JID. */
  groups: Map<string, PeerGroup>
  /** The media host, when the peer was started with `media: true`. */
  media?: import('./media.ts').MediaHost
}
