import PQueue from 'p-queue'
import { GatewayError, Messages } from '../../errors.ts'
import { Deadlines } from '../../store/deadlines.ts'

/** Limits of the per-device send queues. */
export interface SendQueueOptions {
  /** A job answers within this time (queued: dropped unsent; under way: reported as stalled). */
  timeoutMs: number
  /** Pause after each job of a device before its next one starts. */
  minIntervalMs: number
  /** Random extra pause, 0 to this many ms. */
  jitterMs: number
  /** Most jobs waiting or running per device. */
  limit: number
  /** How long an idle device queue is kept for the device's next send (default 60 s). */
  idleQueueMs?: number
}

/**
 * One queue per device (p-queue, concurrency 1), so the sends of a device reach the network one at a
 * time and in order, paced by `minIntervalMs` plus jitter. Every job answers within `timeoutMs`: a job
 * still waiting is dropped (never sent) with 504, a job that stalls on the network is answered 504
 * and the queue moves on. A queue is deleted once it has been idle for a minute, so the map holds only
 * devices with recent work (and a busy device does not build a new queue for every send).
 */
export class SendQueues {
  private readonly queues = new Map<string, PQueue>()
  private readonly idleSince = new Map<string, number>()
  private readonly deadlines: Deadlines
  private sweeper: NodeJS.Timeout | undefined
  private closed = false

  constructor(private readonly options: SendQueueOptions) {
    this.deadlines = new Deadlines(options.timeoutMs)
  }

  /** Whether jobs of a device are spaced by a pause. */
  private get paced(): boolean {
    return this.options.minIntervalMs > 0 || this.options.jitterMs > 0
  }

  private get idleQueueMs(): number {
    return this.options.idleQueueMs ?? 60_000
  }

  /** Run `job` in the device's queue; resolves or rejects with its result, or 504 past the timeout. */
  run<T>(deviceId: string, job: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new GatewayError(503, Messages.shuttingDown))
    const queue = this.queueOf(deviceId)
    if (queue.size + queue.pending >= this.options.limit) {
      return Promise.reject(new GatewayError(429, Messages.sendQueueFull, {}, { headers: { 'retry-after': '5' } }))
    }
    return new Promise<T>((resolve, reject) => {
      let state: 'queued' | 'running' | 'done' = 'queued'
      // Frees the queue for the device's next job: when this one settles, or when it is given up on.
      let release: (() => void) | undefined
      const answered = this.deadlines.watch(() => {
        if (state === 'done') return
        reject(new GatewayError(504, state === 'queued' ? Messages.sendQueueTimeout : Messages.sendStalled))
        state = 'done'
        release?.()
      })
      void queue.add(() => {
        if (state !== 'queued') return Promise.resolve() // given up on while it waited: never run
        state = 'running'
        const slot = new Promise<void>(free => (release = free))
        const settle = (settled: () => void) => {
          if (state !== 'running') return
          state = 'done'
          answered()
          settled()
          release!()
        }
        let work: Promise<T>
        try {
          work = job()
        } catch (err) {
          work = Promise.reject(err)
        }
        work.then(
          value => settle(() => resolve(value)),
          err => settle(() => reject(err)),
        )
        return this.paced ? slot.then(() => this.pause()) : slot
      })
    })
  }

  /** Stop taking jobs and wait (at most `timeoutMs`) for the queued ones to finish. */
  async close(): Promise<void> {
    this.closed = true
    const idle = Promise.all([...this.queues.values()].map(queue => queue.onIdle()))
    let timer: NodeJS.Timeout | undefined
    const limit = new Promise<void>(resolve => {
      timer = setTimeout(resolve, this.options.timeoutMs + this.options.minIntervalMs + this.options.jitterMs)
      timer.unref()
    })
    await Promise.race([idle, limit])
    clearTimeout(timer)
    clearInterval(this.sweeper)
  }

  /** Number of devices with a queue (only those with work in flight). */
  get size(): number {
    return this.queues.size
  }

  // --- Internal helpers ---

  private queueOf(deviceId: string): PQueue {
    let queue = this.queues.get(deviceId)
    if (!queue) {
      const created = new PQueue({ concurrency: 1 })
      created.on('idle', () => this.idleSince.set(deviceId, Date.now()))
      created.on('add', () => this.idleSince.delete(deviceId))
      this.queues.set(deviceId, created)
      queue = created
      this.sweeper ??= setInterval(() => this.dropIdle(), this.idleQueueMs / 2).unref()
    }
    return queue
  }

  /** Delete the queues idle for idleQueueMs. */
  private dropIdle(): void {
    const before = Date.now() - this.idleQueueMs
    for (const [deviceId, since] of this.idleSince) {
      const queue = this.queues.get(deviceId)
      if (since <= before && queue && queue.size === 0 && queue.pending === 0) {
        this.queues.delete(deviceId)
        this.idleSince.delete(deviceId)
      }
    }
    if (this.queues.size === 0) {
      clearInterval(this.sweeper)
      this.sweeper = undefined
    }
  }

  /** The pacing pause between two jobs of a device. */
  private pause(): Promise<void> {
    const ms = this.options.minIntervalMs + (this.options.jitterMs > 0 ? Math.floor(Math.random() * (this.options.jitterMs + 1)) : 0)
    if (ms <= 0) return Promise.resolve()
    return new Promise(resolve => setTimeout(resolve, ms))
  }
}
