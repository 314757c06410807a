import type { BinaryNode, proto, SignalRepositoryWithLIDStore } from '@whiskeysockets/baileys'
import { bigEndian, bytes, child, quietLogger, type Baileys } from './baileys.ts'
import { memoryKeyStore, type PhoneCreds } from './signal-store.ts'

/** A message a phone decrypted: what the gateway (or another device) sent it, as the phone read it. */
export interface PhoneMessage {
  /** The message id (the stanza's). */
  id: string
  /** The sending account's phone number (digits). */
  from: string
  /** The sending device's JID (`<pn>:<device>@s.whatsapp.net`). */
  fromDevice: string
  /** The chat the message was sent to (a phone JID, or a group JID). */
  to: string
  /** The decrypted content (a deviceSentMessage is unwrapped: `sentByOwnDevice` says so). */
  message: proto.IMessage
  /** pkmsg (first message of a session), msg, or skmsg (a group message under the sender's sender key). */
  encryption: 'pkmsg' | 'msg' | 'skmsg'
  /** A copy of what another device of this phone's own account sent (WhatsApp's "device sent message"). */
  sentByOwnDevice: boolean
  /** When the phone decrypted it (ms). */
  at: number
}

/** A key bundle of one device, as published for session set-up. */
export interface KeyBundle {
  registrationId: number
  /** 32-byte Curve25519 identity key. */
  identityKey: Uint8Array
  signedPreKey: { keyId: number; publicKey: Uint8Array; signature: Uint8Array }
  preKey?: { keyId: number; publicKey: Uint8Array }
}

/**
 * The signal side of a phone (device 0 of an account): its own identity and pre-keys, and Baileys'
 * signal repository over libsignal acting as the phone. It decrypts what devices send it and
 * encrypts what it sends them. Sessions are kept per remote device address (its LID device JID).
 */
export class PhoneSignal {
  readonly creds: PhoneCreds
  private readonly repository: SignalRepositoryWithLIDStore
  private readonly keys = memoryKeyStore()
  private nextPreKeyId = 1

  constructor(private readonly lib: Baileys) {
    const { signedIdentityKey, signedPreKey, registrationId } = lib.initAuthCreds()
    this.creds = { signedIdentityKey, signedPreKey, registrationId }
    this.repository = lib.DEFAULT_CONNECTION_CONFIG.makeSignalRepository({ creds: this.creds as never, keys: this.keys }, quietLogger as never)
  }

  /** A fresh bundle of this phone (a new one-time pre-key each call), for a device that starts a session with it. */
  async bundle(): Promise<KeyBundle> {
    const keyId = this.nextPreKeyId++
    const pair = this.lib.Curve.generateKeyPair()
    await this.keys.set({ 'pre-key': { [keyId]: pair } })
    const { signedPreKey } = this.creds
    return {
      registrationId: this.creds.registrationId,
      identityKey: this.creds.signedIdentityKey.public,
      signedPreKey: { keyId: signedPreKey.keyId, publicKey: signedPreKey.keyPair.public, signature: signedPreKey.signature },
      preKey: { keyId, publicKey: pair.public },
    }
  }

  /** Decrypt an `<enc>` from the device at `address` (an LID device JID); the padded Message proto, decoded. */
  async decrypt(address: string, type: 'pkmsg' | 'msg', ciphertext: Uint8Array): Promise<proto.Message> {
    const plain = await this.repository.decryptMessage({ jid: address, type, ciphertext })
    return this.lib.proto.Message.decode(this.lib.unpadRandomMax16(plain))
  }

  /** Encrypt `message` for the device at `address`, starting a session from `bundle()` when there is none. */
  async encrypt(address: string, message: proto.IMessage, bundle: () => KeyBundle | undefined): Promise<{ type: 'pkmsg' | 'msg'; ciphertext: Uint8Array }> {
    if (!(await this.repository.validateSession(address)).exists) {
      const keys = bundle()
      if (!keys) throw new Error(`no key bundle for ${address}`)
      const pub = this.lib.generateSignalPubKey
      await this.repository.injectE2ESession({
        jid: address,
        session: {
          registrationId: keys.registrationId,
          identityKey: pub(keys.identityKey),
          signedPreKey: { keyId: keys.signedPreKey.keyId, publicKey: pub(keys.signedPreKey.publicKey), signature: keys.signedPreKey.signature },
          preKey: keys.preKey ? { keyId: keys.preKey.keyId, publicKey: pub(keys.preKey.publicKey) } : (undefined as never),
        },
      })
    }
    const { type, ciphertext } = await this.repository.encryptMessage({ jid: address, data: this.lib.encodeWAMessage(message) })
    return { type: type as 'pkmsg' | 'msg', ciphertext }
  }

  /** Encrypt `message` for `group` under this phone's sender key (author `meId`); also the sender key distribution message. */
  async encryptGroup(group: string, meId: string, message: proto.IMessage): Promise<{ ciphertext: Uint8Array; senderKeyDistribution: Uint8Array }> {
    const { ciphertext, senderKeyDistributionMessage } = await this.repository.encryptGroupMessage({ group, meId, data: this.lib.encodeWAMessage(message) })
    return { ciphertext, senderKeyDistribution: senderKeyDistributionMessage }
  }

  /** Take in the sender key of `authorJid` for a group (from a sender key distribution message it sent this phone). */
  async processSenderKey(item: proto.Message.ISenderKeyDistributionMessage, authorJid: string): Promise<void> {
    await this.repository.processSenderKeyDistributionMessage({ item, authorJid })
  }

  /** Decrypt a group message (skmsg) of `authorJid` in `group`, with the sender key it distributed; the Message proto, decoded. */
  async decryptGroup(group: string, authorJid: string, ciphertext: Uint8Array): Promise<proto.Message> {
    const plain = await this.repository.decryptGroupMessage({ group, authorJid, msg: ciphertext })
    return this.lib.proto.Message.decode(this.lib.unpadRandomMax16(plain))
  }
}

/** A key bundle as the `<user>` content of an `encrypt` key answer. */
export function bundleNodes(bundle: KeyBundle): BinaryNode[] {
  const nodes: BinaryNode[] = [
    { tag: 'registration', attrs: {}, content: bigEndian(bundle.registrationId, 4) },
    { tag: 'type', attrs: {}, content: Buffer.from([5]) },
    { tag: 'identity', attrs: {}, content: Buffer.from(bundle.identityKey) },
    {
      tag: 'skey',
      attrs: {},
      content: [
        { tag: 'id', attrs: {}, content: bigEndian(bundle.signedPreKey.keyId, 3) },
        { tag: 'value', attrs: {}, content: Buffer.from(bundle.signedPreKey.publicKey) },
        { tag: 'signature', attrs: {}, content: Buffer.from(bundle.signedPreKey.signature) },
      ],
    },
  ]
  if (bundle.preKey)
    nodes.push({
      tag: 'key',
      attrs: {},
      content: [
        { tag: 'id', attrs: {}, content: bigEndian(bundle.preKey.keyId, 3) },
        { tag: 'value', attrs: {}, content: Buffer.from(bundle.preKey.publicKey) },
      ],
    })
  return nodes
}

/** Read an uploaded pre-key list (`encrypt` set) or a key node: `{id, value}` pairs. */
export function readKeyNode(node: BinaryNode | undefined): { keyId: number; publicKey: Buffer; signature?: Buffer } | undefined {
  const id = bytes(child(node, 'id'))
  const value = bytes(child(node, 'value'))
  if (!id || !value) return undefined
  const signature = bytes(child(node, 'signature'))
  return { keyId: id.readUIntBE(0, id.length), publicKey: value, ...(signature ? { signature } : {}) }
}
