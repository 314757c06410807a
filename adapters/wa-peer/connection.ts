import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import type { BinaryNode, proto } from '@whiskeysockets/baileys'
import { children } from './baileys.ts'
import { answerIq } from './iq.ts'
import { goOnline, login } from './login.ts'
import { groupMessageFromDevice } from './groups.ts'
import { ackFromDevice, messageFromDevice, receiptFromDevice } from './messaging.ts'
import type { Channel, LinkedDevice, PeerCore, Registration } from './model.ts'
import { NoiseServer, type ServerIdentity } from './noise.ts'
import { pairDeviceIq, registrationOf } from './pairing.ts'
import { acceptWebSocket, binaryFrame, readWebSocket } from './websocket.ts'

/** Per-connection settings from the peer's options. */
interface ConnectionOptions {
  endHistoryWait: boolean
  offlineMarker: boolean
}

let ids = 0

/** How long a connection that sent its last frame waits for the client to close before it closes itself. */
const CLOSE_GRACE_MS = 1_000

/**
 * One client connection: WebSocket, Noise, then the node dispatch. A registration payload gets QR
 * refs (`pair-device`); a login payload goes through `login()`. Nodes are handled one at a time, in
 * the order they arrive.
 */
export class Connection implements Channel {
  readonly id = ++ids
  device?: LinkedDevice
  registration?: Registration
  private readonly noise: NoiseServer
  private readonly waiting = new Map<string, (node: BinaryNode) => void>()
  private silent = false
  private ended = false
  private queue: Promise<void> = Promise.resolve()

  constructor(
    private readonly core: PeerCore,
    private readonly socket: Socket,
    identity: ServerIdentity,
    private readonly options: ConnectionOptions,
    req: IncomingMessage,
  ) {
    acceptWebSocket(req, socket)
    this.noise = new NoiseServer(core.lib, identity, {
      write: data => this.write(binaryFrame(data)),
      handshake: (clientStatic, payload) => this.onHandshake(clientStatic, payload),
      node: node => this.onNode(node),
    })
    socket.on('close', () => this.onClose())
    // The HTTP server's sockets are half-open: a client that goes away without a close frame (its
    // process killed) only sends FIN, and 'close' would never come. Its half closed, the connection is over.
    socket.on('end', () => {
      this.onClose()
      socket.end()
    })
    readWebSocket(socket, data => {
      if (this.silent || this.ended) return
      this.noise.receive(data).catch(err => {
        core.records.problems.push(`connection ${this.id}: ${(err as Error).message}`)
        socket.destroy()
      })
    })
  }

  get closed(): boolean {
    return this.ended
  }

  send(node: BinaryNode): void {
    if (this.silent || this.ended) return
    this.noise.sendNode(node)
  }

  query(node: BinaryNode, timeoutMs = 10_000): Promise<BinaryNode> {
    const id = node.attrs.id
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id)
        reject(new Error(`no answer to iq ${id}`))
      }, timeoutMs)
      this.waiting.set(id, answer => {
        clearTimeout(timer)
        resolve(answer)
      })
      this.send(node)
    })
  }

  streamError(error: { code?: string; child?: BinaryNode }): void {
    this.send({ tag: 'stream:error', attrs: error.code ? { code: error.code } : {}, ...(error.child ? { content: [error.child] } : {}) })
    this.close()
  }

  silence(): void {
    this.silent = true
  }

  close(): void {
    if (this.ended) return
    this.ended = true
    this.detach()
    // The client reads the last frame before it sees the socket close: Baileys decodes frames
    // asynchronously, so a close right behind a stream error can overtake it (then a 401 reads as a
    // plain 428 and the client reconnects). A server leaves the client a moment to close first.
    setTimeout(() => this.socket.end(), CLOSE_GRACE_MS).unref()
    setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS + 200).unref()
  }

  /** Cut the TCP connection at once (a network failure, not a server's goodbye). */
  cut(): void {
    this.ended = true
    this.detach()
    this.socket.destroy()
  }

  /** Send `<xmlstreamend/>` (Baileys: "Connection Terminated by Server", 428), then close. */
  endStream(): void {
    this.send({ tag: 'xmlstreamend', attrs: {} })
    this.close()
  }

  private write(data: Buffer): void {
    if (!this.socket.destroyed) this.socket.write(data)
  }

  private onHandshake(clientStatic: Buffer, payload: proto.ClientPayload): void {
    const { core } = this
    core.stats.connections++
    core.records.payloads.push(payload)
    if (payload.devicePairingData) {
      const refs = core.newRefs()
      this.registration = registrationOf(payload, clientStatic, refs)
      if (!this.registration) {
        core.records.problems.push('a registration payload without its signal keys')
        return this.close()
      }
      for (const ref of refs) core.qrRefs.set(ref, this)
      return this.send(pairDeviceIq(refs))
    }
    login(core, this, payload, clientStatic)
  }

  private onNode(node: BinaryNode): void {
    const { core } = this
    if (core.records.nodes.length < core.recordLimit) core.records.nodes.push(node)
    this.queue = this.queue.then(() => this.dispatch(node)).catch(err => void core.records.problems.push(`handling <${node.tag}>: ${(err as Error).message}`))
  }

  private async dispatch(node: BinaryNode): Promise<void> {
    const { core } = this
    if (node.tag === 'iq') {
      const waiter = this.waiting.get(node.attrs.id)
      if (waiter && (node.attrs.type === 'result' || node.attrs.type === 'error')) {
        this.waiting.delete(node.attrs.id)
        return waiter(node)
      }
      if (node.attrs.type !== 'get' && node.attrs.type !== 'set') return
      this.send(await answerIq(core, this, node))
      const active = node.attrs.xmlns === 'passive' && children(node)[0]?.tag === 'active'
      if (active && this.device) await goOnline(core, this.device, this, this.options)
      return
    }
    if (node.tag === 'message') return node.attrs.to?.endsWith('@g.us') ? groupMessageFromDevice(core, this, node) : messageFromDevice(core, this, node)
    if (node.tag === 'receipt') return receiptFromDevice(core, this, node)
    if (node.tag === 'ack') return ackFromDevice(core, this, node)
  }

  private onClose(): void {
    this.ended = true
    this.detach()
  }

  /** Forget this connection: its QR refs, and its device's link to it. */
  private detach(): void {
    if (this.registration) for (const ref of this.registration.refs) if (this.core.qrRefs.get(ref) === this) this.core.qrRefs.delete(ref)
    if (this.device?.channel === this) {
      this.device.channel = undefined
      this.device.online = false
    }
  }
}
