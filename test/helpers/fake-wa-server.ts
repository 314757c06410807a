import { createHash } from 'node:crypto'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import {
  aesDecryptGCM,
  aesEncryptGCM,
  Curve,
  decodeBinaryNode,
  encodeBinaryNode,
  hkdf,
  NOISE_MODE,
  proto,
  sha256,
  WA_CERT_DETAILS,
  type BinaryNode,
  type KeyPair,
} from '@whiskeysockets/baileys'

/**
 * A local peer that speaks just enough of WhatsApp Web's protocol for the real Baileys stack to reach
 * the QR stage offline: a WebSocket endpoint, the server side of the Noise XX handshake (with a
 * certificate chain signed by a root key of its own, which `trustRoot()` installs in Baileys'
 * WA_CERT_DETAILS), then a `pair-device` iq with QR refs. It records the registration payload and
 * every node Baileys sends afterwards.
 */
export interface FakeWhatsAppServer {
  /** `ws://127.0.0.1:<port>/ws/chat`, for `socketConfig.waWebSocketUrl`. */
  url: string
  /** ClientPayloads received in the handshake (registration or login), in order. */
  payloads: proto.ClientPayload[]
  /** Binary nodes received after the handshake, in order. */
  nodes: BinaryNode[]
  /** WebSocket upgrade requests received (refused or not). */
  upgrades: number
  /** The public key of this server's certificate root (for a Baileys in another process: WA_CERT_DETAILS.PUBLIC_KEY). */
  rootPublicKey: Buffer
  /** Make Baileys trust this server's certificate root; returns the function that restores the real root. */
  trustRoot(): () => void
  /** Close every connection and the listener. */
  close(): Promise<void>
}

/**
 * Start the peer; `refs` are the QR references sent in `pair-device`. With `refuseUpgrade` every
 * WebSocket upgrade is answered with that HTTP status (and the connection closed), as an edge or a
 * proxy in front of WhatsApp does.
 */
export async function startFakeWhatsApp(options: { refs?: string[]; refuseUpgrade?: number } = {}): Promise<FakeWhatsAppServer> {
  const refs = options.refs ?? ['REF-1', 'REF-2']
  let upgrades = 0
  const root = Curve.generateKeyPair()
  const intermediate = Curve.generateKeyPair()
  const serverStatic = Curve.generateKeyPair()
  const certificate = certificateChain(root, intermediate, serverStatic)
  const payloads: proto.ClientPayload[] = []
  const nodes: BinaryNode[] = []
  const sockets = new Set<Socket>()
  const http = createServer((_, res) => res.writeHead(426).end())
  http.on('upgrade', (req: IncomingMessage, socket: Socket) => {
    upgrades++
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => socket.destroy())
    if (options.refuseUpgrade) return void socket.end(`HTTP/1.1 ${options.refuseUpgrade} Refused\r\nConnection: close\r\nContent-Length: 7\r\n\r\nrefused`)
    acceptWebSocket(req, socket)
    const peer = new NoisePeer(serverStatic, certificate, {
      send: data => socket.write(wsFrame(0x2, data)),
      onPayload: payload => {
        payloads.push(payload)
        return [{ tag: 'iq', attrs: { id: 'pair-1', type: 'set', xmlns: 'md', from: 's.whatsapp.net' }, content: [{ tag: 'pair-device', attrs: {}, content: refs.map(ref => ({ tag: 'ref', attrs: {}, content: Buffer.from(ref) })) }] }]
      },
      onNode: node => void nodes.push(node),
    })
    readWebSocket(socket, data => void peer.receive(data).catch(() => socket.destroy()))
  })
  await new Promise<void>(resolve => http.listen(0, '127.0.0.1', resolve))
  const { port } = http.address() as AddressInfo
  return {
    url: `ws://127.0.0.1:${port}/ws/chat`,
    payloads,
    nodes,
    get upgrades() {
      return upgrades
    },
    rootPublicKey: Buffer.from(root.public),
    trustRoot() {
      const real = WA_CERT_DETAILS.PUBLIC_KEY
      WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(root.public)
      return () => void (WA_CERT_DETAILS.PUBLIC_KEY = real)
    },
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>(resolve => http.close(() => resolve()))
    },
  }
}

// --- Internal helpers ---

/** The server half of WhatsApp's Noise_XX_25519_AESGCM_SHA256 handshake, then the framed transport. */
class NoisePeer {
  private hash: Buffer = Buffer.from(NOISE_MODE)
  private salt: Buffer = this.hash
  private key: Buffer = this.hash
  private counter = 0
  private inBytes = Buffer.alloc(0)
  private sawIntro = false
  private ephemeral?: KeyPair
  private transport?: { enc: Buffer; dec: Buffer; read: number; write: number }

  constructor(
    private readonly staticKey: KeyPair,
    private readonly certificate: Uint8Array,
    private readonly io: { send(data: Buffer): void; onPayload(payload: proto.ClientPayload): BinaryNode[]; onNode(node: BinaryNode): void },
  ) {}

  async receive(data: Buffer): Promise<void> {
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
    if (this.transport) {
      const plain = aesDecryptGCM(frame, this.transport.dec, iv(this.transport.read++), Buffer.alloc(0))
      return this.io.onNode(await decodeBinaryNode(plain))
    }
    const handshake = proto.HandshakeMessage.decode(frame)
    if (handshake.clientHello?.ephemeral) return this.serverHello(Buffer.from(handshake.clientHello.ephemeral))
    if (handshake.clientFinish) return this.clientFinish(handshake.clientFinish)
  }

  private serverHello(clientEphemeral: Buffer): void {
    this.authenticate(clientEphemeral)
    this.ephemeral = Curve.generateKeyPair()
    this.authenticate(this.ephemeral.public)
    this.mixIntoKey(Curve.sharedKey(this.ephemeral.private, clientEphemeral))
    const staticEnc = this.encrypt(this.staticKey.public)
    this.mixIntoKey(Curve.sharedKey(this.staticKey.private, clientEphemeral))
    const payload = this.encrypt(this.certificate)
    this.send(proto.HandshakeMessage.encode({ serverHello: { ephemeral: this.ephemeral.public, static: staticEnc, payload } }).finish())
  }

  private clientFinish(finish: proto.HandshakeMessage.IClientFinish): void {
    const clientStatic = this.decrypt(Buffer.from(finish.static!))
    this.mixIntoKey(Curve.sharedKey(this.ephemeral!.private, clientStatic))
    const payload = proto.ClientPayload.decode(this.decrypt(Buffer.from(finish.payload!)))
    const key = Buffer.from(hkdf(Buffer.alloc(0), 64, { salt: this.salt, info: '' }))
    this.transport = { enc: key.subarray(32), dec: key.subarray(0, 32), read: 0, write: 0 }
    for (const node of this.io.onPayload(payload)) this.send(encodeBinaryNode(node))
  }

  private send(data: Uint8Array): void {
    let body = Buffer.from(data)
    if (this.transport) body = aesEncryptGCM(body, this.transport.enc, iv(this.transport.write++), Buffer.alloc(0))
    const header = Buffer.from([(body.length >> 16) & 0xff, (body.length >> 8) & 0xff, body.length & 0xff])
    this.io.send(Buffer.concat([header, body]))
  }

  private authenticate(data: Uint8Array): void {
    this.hash = Buffer.from(sha256(Buffer.concat([this.hash, data])))
  }

  private mixIntoKey(data: Uint8Array): void {
    const key = Buffer.from(hkdf(Buffer.from(data), 64, { salt: this.salt, info: '' }))
    this.salt = key.subarray(0, 32)
    this.key = key.subarray(32)
    this.counter = 0
  }

  private encrypt(plain: Uint8Array): Buffer {
    const result = aesEncryptGCM(plain, this.key, iv(this.counter++), this.hash)
    this.authenticate(result)
    return result
  }

  private decrypt(cipher: Buffer): Buffer {
    const result = aesDecryptGCM(cipher, this.key, iv(this.counter++), this.hash)
    this.authenticate(cipher)
    return result
  }
}

function iv(counter: number): Buffer {
  const buffer = Buffer.alloc(12)
  buffer.writeUInt32BE(counter, 8)
  return buffer
}

/** leaf (the server's static key) signed by an intermediate, itself signed by `root` with issuer serial 0. */
function certificateChain(root: KeyPair, intermediate: KeyPair, leafKey: KeyPair): Uint8Array {
  const Details = proto.CertChain.NoiseCertificate.Details
  const intermediateDetails = Details.encode({ serial: 1, issuerSerial: WA_CERT_DETAILS.SERIAL, key: intermediate.public, notBefore: 0, notAfter: 4_102_444_800 }).finish()
  const leafDetails = Details.encode({ serial: 2, issuerSerial: 1, key: leafKey.public, notBefore: 0, notAfter: 4_102_444_800 }).finish()
  return proto.CertChain.encode({
    intermediate: { details: intermediateDetails, signature: Curve.sign(root.private, intermediateDetails) },
    leaf: { details: leafDetails, signature: Curve.sign(intermediate.private, leafDetails) },
  }).finish()
}

/** Complete the WebSocket opening handshake (RFC 6455) on an upgraded socket. */
function acceptWebSocket(req: IncomingMessage, socket: Socket): void {
  const accept = createHash('sha1').update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64')
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`)
}

/** Read client frames (masked); binary payloads go to `onData`, a close is answered and ends the socket. */
function readWebSocket(socket: Socket, onData: (data: Buffer) => void): void {
  let buffer = Buffer.alloc(0)
  socket.on('data', chunk => {
    buffer = Buffer.concat([buffer, chunk])
    for (;;) {
      if (buffer.length < 2) return
      const opcode = buffer[0] & 0x0f
      let length = buffer[1] & 0x7f
      let offset = 2
      if (length === 126) {
        if (buffer.length < 4) return
        length = buffer.readUInt16BE(2)
        offset = 4
      } else if (length === 127) {
        if (buffer.length < 10) return
        length = Number(buffer.readBigUInt64BE(2))
        offset = 10
      }
      const masked = (buffer[1] & 0x80) !== 0
      const mask = masked ? buffer.subarray(offset, offset + 4) : undefined
      if (masked) offset += 4
      if (buffer.length < offset + length) return
      const payload = Buffer.from(buffer.subarray(offset, offset + length))
      if (mask) for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i % 4]
      buffer = buffer.subarray(offset + length)
      if (opcode === 0x8) {
        socket.end(wsFrame(0x8, payload.subarray(0, 2)))
        return
      }
      if (opcode === 0x9) socket.write(wsFrame(0xa, payload))
      else if (opcode === 0x2 || opcode === 0x0) onData(payload)
    }
  })
}

/** A server frame (unmasked, final) with `opcode`. */
function wsFrame(opcode: number, payload: Buffer): Buffer {
  const header =
    payload.length < 126
      ? Buffer.from([0x80 | opcode, payload.length])
      : payload.length < 65_536
        ? Buffer.from([0x80 | opcode, 126, payload.length >> 8, payload.length & 0xff])
        : Buffer.concat([Buffer.from([0x80 | opcode, 127]), bigLength(payload.length)])
  return Buffer.concat([header, payload])
}

function bigLength(length: number): Buffer {
  const buffer = Buffer.alloc(8)
  buffer.writeBigUInt64BE(BigInt(length))
  return buffer
}
