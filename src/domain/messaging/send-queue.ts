import PQueue from 'p-queue'
import { GatewayError } from '../../errors.ts'
import { Deadlines, invoke } from '../../store/deadlines.ts'

/** Named as in MessagingSettings, which passes straight through. */
interface SendQueueOptions {
  /** A job answers within this time (queued: dropped unsent; under way: reported as stalled). */
  sendTimeoutMs: number
  /** Pause after each job of a device before its next one starts. */
  minIntervalMs: number
  /** Random extra pause, 0 to this many ms. */
  intervalJitterMs: number
  /** Most jobs waiting or running per device. */
  sendQueueLimit: number
  /** How long an idle device queue is kept for the device's next send (default 60 s). */
  idleQueueMs?: number
}

/** One p-queue per device (concurrency 1): the sends of a device reach the network one at a time, in order, paced by `minIntervalMs` plus jitter. Every job answers within `sendTimeoutMs` (docs/limits.md): still waiting, `send-queue-timeout` and never sent; stalled, `send-stalled` and the queue moves on. A queue idle for `idleQueueMs` is dropped. */
export class SendQueues {
  private readonly queues = new Map<string, DeviceQueue>()
  private readonly deadlines: Deadlines
  private sweeper: NodeJS.Timeout | undefined
  private closed = false
  private readonly idleQueueMs: number

  constructor(private readonly options: SendQueueOptions) {
    this.deadlines = new Deadlines(options.sendTimeoutMs)
    this.idleQueueMs = options.idleQueueMs ?? 60_000
  }

  /** Run `job` in the device's queue; resolves or rejects with its result, or a 504 code past the timeout. */
  run<T>(deviceId: string, job: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new GatewayError('shutting-down'))
    const device = this.queueOf(deviceId)
    if (device.unsettled >= this.options.sendQueueLimit) return Promise.reject(new GatewayError('send-queue-full', { retryAfterSeconds: 5 }))
    device.unsettled++
    device.usedAt = Date.now()
    const expiresAt = Date.now() + this.options.sendTimeoutMs
    return new Promise<T>((resolve, reject) => {
      let state: 'queued' | 'running' | 'done' = 'queued'
      let endTurn = () => {}
      // The job's answer, its time-out or a stall: whichever comes first answers the caller and ends the device's turn.
      const answer = (settle: () => void) => {
        if (state === 'done') return
        state = 'done'
        answered()
        device.unsettled--
        endTurn()
        settle()
      }
      const expire = () => {
        const code = state === 'running' ? 'send-stalled' : 'send-queue-timeout'
        answer(() => reject(new GatewayError(code)))
      }
      const answered = this.deadlines.watch(expire)
      void device.queue.add(() => {
        // Already answered, or past its time-out though its timer has not fired yet: never run.
        if (state !== 'queued' || expiresAt <= Date.now()) return expire()
        state = 'running'
        const turn = new Promise<void>(end => {
          endTurn = end
          invoke(job).then(
            value => answer(() => resolve(value)),
            err => answer(() => reject(err)),
          )
        })
        const pause = this.options.minIntervalMs + (this.options.intervalJitterMs > 0 ? Math.floor(Math.random() * (this.options.intervalJitterMs + 1)) : 0)
        return pause > 0 ? turn.then(() => new Promise(resolve => setTimeout(resolve, pause))) : turn // not an async function: a promise and a turn less a send
      })
    })
  }

  /** Stop taking jobs and wait (at most `sendTimeoutMs` and a pause) for the queued ones to finish. */
  async close(): Promise<void> {
    this.closed = true
    let timer: NodeJS.Timeout | undefined
    const limit = new Promise<void>(resolve => {
      timer = setTimeout(resolve, this.options.sendTimeoutMs + this.options.minIntervalMs + this.options.intervalJitterMs)
      timer.unref()
    })
    await Promise.race([Promise.all([...this.queues.values()].map(device => device.queue.onIdle())), limit])
    clearTimeout(timer)
    clearInterval(this.sweeper)
  }

  /** Number of devices with a queue (those with recent work). */
  get size(): number {
    return this.queues.size
  }

  private queueOf(deviceId: string): DeviceQueue {
    let device = this.queues.get(deviceId)
    if (!device) {
      device = { queue: new PQueue({ concurrency: 1 }), unsettled: 0, usedAt: Date.now() }
      this.queues.set(deviceId, device)
      this.sweeper ??= setInterval(() => this.dropIdle(), this.idleQueueMs / 2).unref()
    }
    return device
  }

  /** Delete the queues that have had nothing to do for idleQueueMs. */
  private dropIdle(): void {
    const before = Date.now() - this.idleQueueMs
    for (const [deviceId, device] of this.queues) {
      if (device.unsettled === 0 && device.queue.size === 0 && device.queue.pending === 0 && device.usedAt <= before) this.queues.delete(deviceId)
    }
    if (this.queues.size === 0) {
      clearInterval(this.sweeper)
      this.sweeper = undefined
    }
  }
}

interface DeviceQueue {
  queue: PQueue
  /** Jobs waiting or running (not answered yet): the queue's length for its limit. */
  unsettled: number
  /** When a job last joined or left (for dropping idle queues). */
  usedAt: number
}
