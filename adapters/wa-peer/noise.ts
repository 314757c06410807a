import type { BinaryNode, KeyPair, proto } from '@whiskeysockets/baileys'
import type { Baileys } from './baileys.ts'

/** The peer's server identity: a certificate root of its own, an intermediate, and the static key the leaf certifies. */
export interface ServerIdentity {
  root: KeyPair
  staticKey: KeyPair
  /** The encoded CertChain sent in the server hello. */
  certificate: Uint8Array
}

/** A fresh server identity whose chain (leaf signed by an intermediate signed by the root) passes Baileys' check once the root is trusted. */
export function serverIdentity(lib: Baileys): ServerIdentity {
  const { Curve, proto, WA_CERT_DETAILS } = lib
  const root = Curve.generateKeyPair()
  const intermediate = Curve.generateKeyPair()
  const staticKey = Curve.generateKeyPair()
  const Details = proto.CertChain.NoiseCertificate.Details
  const intermediateDetails = Details.encode({
    serial: 1,
    issuerSerial: WA_CERT_DETAILS.SERIAL,
    key: intermediate.public,
    notBefore: 0,
    notAfter: 4_102_444_800,
  }).finish()
  const leafDetails = Details.encode({ serial: 2, issuerSerial: 1, key: staticKey.public, notBefore: 0, notAfter: 4_102_444_800 }).finish()
  const certificate = proto.CertChain.encode({
    intermediate: { details: intermediateDetails, signature: Curve.sign(root.private, intermediateDetails) },
    leaf: { details: leafDetails, signature: Curve.sign(intermediate.private, leafDetails) },
  }).finish()
  return { root, staticKey, certificate }
}

/** What the Noise layer reports to the connection above it. */
interface NoiseEvents {
  /** Write bytes to the WebSocket. */
  write(data: Buffer): void
  /** The handshake ended: the client's static (Noise) public key and its ClientPayload. */
  handshake(clientStatic: Buffer, payload: proto.ClientPayload): void
  /** A binary node arrived on the established channel. */
  node(node: BinaryNode): void
}

/**
 * The server half of WhatsApp's Noise_XX_25519_AESGCM_SHA256 handshake, then the framed, encrypted
 * transport (3-byte length prefix, AES-GCM with a counter IV per direction) carrying binary nodes.
 */
export class NoiseServer {
  private hash: Buffer
  private salt: Buffer
  private key: Buffer
  private counter = 0
  private inBytes = Buffer.alloc(0)
  private sawIntro = false
  private ephemeral?: KeyPair
  private transport?: { enc: Buffer; dec: Buffer; read: number; write: number }
  private chain: Promise<void> = Promise.resolve()

  constructor(
    private readonly lib: Baileys,
    private readonly identity: ServerIdentity,
    private readonly events: NoiseEvents,
  ) {
    this.hash = Buffer.from(lib.NOISE_MODE)
    this.salt = this.hash
    this.key = this.hash
  }

  /** Feed bytes from the WebSocket (frames are handled one at a time, in order). */
  receive(data: Buffer): Promise<void> {
    this.chain = this.chain.then(() => this.consume(data))
    return this.chain
  }

  /** Encode, encrypt and write a node on the established channel. */
  sendNode(node: BinaryNode): void {
    this.send(this.lib.encodeBinaryNode(node))
  }

  private async consume(data: Buffer): Promise<void> {
    this.inBytes = Buffer.concat([this.inBytes, data])
    if (!this.sawIntro) {
      if (this.inBytes.length < 4) return
      this.authenticate(this.inBytes.subarray(0, 4)) // "WA", 6, dictionary version
      this.inBytes = this.inBytes.subarray(4)
      this.sawIntro = true
    }
    while (this.inBytes.length >= 3) {
      const size = (this.inBytes[0] << 16) | (this.inBytes[1] << 8) | this.inBytes[2]
      if (this.inBytes.length < size + 3) return
      const frame = this.inBytes.subarray(3, size + 3)
      this.inBytes = this.inBytes.subarray(size + 3)
      await this.onFrame(frame)
    }
  }

  private async onFrame(frame: Buffer): Promise<void> {
    const { lib } = this
    if (this.transport) {
      const plain = lib.aesDecryptGCM(frame, this.transport.dec, iv(this.transport.read++), Buffer.alloc(0))
      return this.events.node(await lib.decodeBinaryNode(plain))
    }
    const handshake = lib.proto.HandshakeMessage.decode(frame)
    if (handshake.clientHello?.ephemeral) return this.serverHello(Buffer.from(handshake.clientHello.ephemeral))
    if (handshake.clientFinish) return this.clientFinish(handshake.clientFinish)
  }

  private serverHello(clientEphemeral: Buffer): void {
    const { Curve, proto } = this.lib
    this.authenticate(clientEphemeral)
    this.ephemeral = Curve.generateKeyPair()
    this.authenticate(this.ephemeral.public)
    this.mixIntoKey(Curve.sharedKey(this.ephemeral.private, clientEphemeral))
    const staticEnc = this.encrypt(this.identity.staticKey.public)
    this.mixIntoKey(Curve.sharedKey(this.identity.staticKey.private, clientEphemeral))
    const payload = this.encrypt(this.identity.certificate)
    this.send(proto.HandshakeMessage.encode({ serverHello: { ephemeral: this.ephemeral.public, static: staticEnc, payload } }).finish())
  }

  private clientFinish(finish: proto.HandshakeMessage.IClientFinish): void {
    const { Curve, proto, hkdf } = this.lib
    const clientStatic = this.decrypt(Buffer.from(finish.static!))
    this.mixIntoKey(Curve.sharedKey(this.ephemeral!.private, clientStatic))
    const payload = proto.ClientPayload.decode(this.decrypt(Buffer.from(finish.payload!)))
    const key = Buffer.from(hkdf(Buffer.alloc(0), 64, { salt: this.salt, info: '' }))
    this.transport = { enc: key.subarray(32), dec: key.subarray(0, 32), read: 0, write: 0 }
    this.events.handshake(clientStatic, payload)
  }

  private send(data: Uint8Array): void {
    let body = Buffer.from(data)
    if (this.transport) body = this.lib.aesEncryptGCM(body, this.transport.enc, iv(this.transport.write++), Buffer.alloc(0))
    const header = Buffer.from([(body.length >> 16) & 0xff, (body.length >> 8) & 0xff, body.length & 0xff])
    this.events.write(Buffer.concat([header, body]))
  }

  private authenticate(data: Uint8Array): void {
    this.hash = Buffer.from(this.lib.sha256(Buffer.concat([this.hash, data])))
  }

  private mixIntoKey(data: Uint8Array): void {
    const key = Buffer.from(this.lib.hkdf(Buffer.from(data), 64, { salt: this.salt, info: '' }))
    this.salt = key.subarray(0, 32)
    this.key = key.subarray(32)
    this.counter = 0
  }

  private encrypt(plain: Uint8Array): Buffer {
    const result = this.lib.aesEncryptGCM(plain, this.key, iv(this.counter++), this.hash)
    this.authenticate(result)
    return result
  }

  private decrypt(cipher: Buffer): Buffer {
    const result = this.lib.aesDecryptGCM(cipher, this.key, iv(this.counter++), this.hash)
    this.authenticate(cipher)
    return result
  }
}

// --- Internal helpers ---

function iv(counter: number): Buffer {
  const buffer = Buffer.alloc(12)
  buffer.writeUInt32BE(counter, 8)
  return buffer
}
