import { randomBytes } from 'node:crypto'
import { PassThrough } from 'node:stream'
import { TransportError } from 'zapgate'
import type { IncomingMessage } from 'zapgate'
import type { DeviceEndpoint } from './types.ts'
import type { Ack, Frame } from './wire.ts'

/** What a stream connection asks of the server that holds it. */
interface StreamHooks {
  /**
   * The messages the gateway did not take (no ack, or an ack with an error) when the stream ended,
   * oldest first: hand them to the device again, ahead of later ones (at least once).
   */
  redeliver(deviceId: string, messages: IncomingMessage[]): void
  /** The stream ended (either side): forget the connection, take it off the network. */
  ended(connection: StreamConnection): void
}

/** How long a linked frame may wait for the gateway's ack before the scan fails. */
const LINK_ACK_MS = 30_000

/**
 * One stream of the simulator server to a gateway (docs/simulator.md): a pending link or an open
 * device connection. Its `endpoint` is how the network reaches the device: frames are written as
 * JSON lines, and the ones with a `seq` wait for the gateway's ack (a message at most `ackWaitMs`,
 * after which the device's next messages go ahead). A message not taken (never acked, or acked with
 * an error) is delivered again when the stream ends: at least once, as on the real network. At most
 * `unackedLimit` messages wait so: the next one ends the stream (the gateway reconnects and gets
 * them all again), so a gateway that never acks cannot make the server hold frames without end.
 */
export class StreamConnection {
  /** Unguessable: naming it is what lets a gateway act for the device. */
  readonly id = randomBytes(18).toString('base64url')
  readonly stream = new PassThrough()
  readonly endpoint: DeviceEndpoint
  private seq = 0
  private readonly waiting = new Map<number, { resolve: (ack: Ack) => void; reject: (err: Error) => void }>()
  /** Message frames the gateway has not taken yet, by seq (oldest first). */
  private readonly untaken = new Map<number, IncomingMessage>()
  private over = false

  constructor(
    readonly deviceId: string,
    readonly kind: 'link' | 'device',
    private readonly hooks: StreamHooks,
    private readonly ackWaitMs: number,
    private readonly unackedLimit: number,
  ) {
    this.endpoint = {
      linked: async (_deviceId, credentials) => {
        const acked = this.request({ type: 'linked', ...credentials }).catch(() => {
          throw new TransportError('not-found', 'the device is no longer linking')
        })
        const ack = await within(acked, LINK_ACK_MS)
        if (!ack) throw new TransportError('timeout', 'the gateway did not confirm the link in time')
        if (ack.error) throw new TransportError(ack.error.code in CODES ? ack.error.code : 'failed', String(ack.error.message))
        this.end({ type: 'closed', state: 'closed', reason: 'linked' })
      },
      receive: async (_deviceId, message) => {
        if (this.untaken.size >= this.unackedLimit) {
          this.untaken.set(++this.seq, message) // never written: it goes again with the others, last
          return this.end({ type: 'closed', state: 'closed', reason: `more than ${this.unackedLimit} messages not acknowledged` })
        }
        const acked = this.request({ type: 'message', message }, message)
        await within(
          acked.catch(() => undefined),
          this.ackWaitMs,
        )
      },
      closed: async (_deviceId, state, reason) => this.end({ type: 'closed', state, reason }),
    }
  }

  /** Whether the stream has ended. */
  get ended(): boolean {
    return this.over
  }

  /** Write a frame that needs no answer (pings, `linking`). */
  write(frame: Frame): void {
    if (!this.over) this.stream.write(`${JSON.stringify(frame)}\n`)
  }

  /** Write a frame with the next `seq`; resolves with the gateway's ack, rejects when the stream ends before it. */
  request(frame: DistributiveOmit<Extract<Frame, { seq: number }>, 'seq'>, message?: IncomingMessage): Promise<Ack> {
    if (this.over) return Promise.reject(new Error('the stream has ended'))
    const seq = ++this.seq
    if (message) this.untaken.set(seq, message)
    return new Promise<Ack>((resolve, reject) => {
      this.waiting.set(seq, { resolve, reject })
      this.write({ ...frame, seq } as Frame)
    })
  }

  /** The gateway acked frame `seq` (a message acked with an error is not taken: it stays for redelivery). False when no such frame waits. */
  ack(ack: Ack): boolean {
    const waiter = this.waiting.get(ack.seq)
    if (!waiter) return false
    this.waiting.delete(ack.seq)
    if (!ack.error) this.untaken.delete(ack.seq)
    waiter.resolve(ack)
    return true
  }

  /** End the stream, with `frame` (a `closed` frame) as its last line. */
  end(frame?: Extract<Frame, { type: 'closed' }>): void {
    if (this.over) return
    if (frame) this.write(frame)
    this.finish()
    this.stream.end()
  }

  /** The gateway's side of the stream went away. */
  gone(): void {
    if (!this.over) this.finish()
  }

  // --- Internal helpers ---

  private finish(): void {
    this.over = true
    this.hooks.ended(this)
    this.hooks.redeliver(this.deviceId, [...this.untaken.values()])
    this.untaken.clear()
    const gone = new Error('the stream has ended')
    for (const { reject } of this.waiting.values()) reject(gone)
    this.waiting.clear()
  }
}

/** What `promise` resolves to, or undefined once `ms` have passed. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<undefined>(resolve => {
    timer = setTimeout(resolve, ms, undefined)
    timer.unref()
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

const CODES = {
  'not-connected': 1,
  'already-connected': 1,
  'not-found': 1,
  'not-admin': 1,
  'rate-limited': 1,
  timeout: 1,
  unreachable: 1,
  invalid: 1,
  failed: 1,
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never
