import PQueue from 'p-queue'
import { GatewayError } from '../../errors.ts'
import { Deadlines } from '../../store/deadlines.ts'

/** Limits of the per-device send queues. */
interface SendQueueOptions {
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
 * One p-queue per device (concurrency 1), so the sends of a device reach the network one at a time
 * and in order, paced by `minIntervalMs` plus jitter. Every job answers within `timeoutMs`: a job
 * still waiting is answered `send-queue-timeout` and skipped when its turn comes (never sent); a job
 * that stalls on the network is answered `send-stalled` and the queue moves on. A device's queue is
 * dropped once it has been idle for `idleQueueMs`, so the map holds only devices with recent work.
 */
export class SendQueues {
  private readonly queues = new Map<string, DeviceQueue>()
  private readonly deadlines: Deadlines
  private sweeper: NodeJS.Timeout | undefined
  private closed = false

  constructor(private readonly options: SendQueueOptions) {
    this.deadlines = new Deadlines(options.timeoutMs)
  }

  /** Run `job` in the device's queue; resolves or rejects with its result, or a 504 code past the timeout. */
  run<T>(deviceId: string, job: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new GatewayError('shutting-down'))
    const device = this.queueOf(deviceId)
    if (device.unsettled >= this.options.limit) return Promise.reject(new GatewayError('send-queue-full', { retryAfterSeconds: 5 }))
    device.unsettled++
    device.usedAt = Date.now()
    return new Promise<T>((resolve, reject) => {
      const task = new Task(job, resolve as (value: unknown) => void, reject, () => device.unsettled--, Date.now() + this.options.timeoutMs)
      task.answered = this.deadlines.watch(() => task.expire())
      void device.queue.add(() => this.perform(task))
    })
  }

  /** Stop taking jobs and wait (at most `timeoutMs` and a pause) for the queued ones to finish. */
  async close(): Promise<void> {
    this.closed = true
    let timer: NodeJS.Timeout | undefined
    const limit = new Promise<void>(resolve => {
      timer = setTimeout(resolve, this.options.timeoutMs + this.options.minIntervalMs + this.options.jitterMs)
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

  // --- Internal helpers ---

  /** A job's turn: skipped when already answered (given up on while it waited), else run until it settles or stalls, then the pause. */
  private async perform(task: Task): Promise<void> {
    if (!task.start()) return
    await task.outcome
    const pause = this.pauseMs()
    if (pause > 0) await new Promise(resolve => setTimeout(resolve, pause))
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

  private get idleQueueMs(): number {
    return this.options.idleQueueMs ?? 60_000
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

  /** The pacing pause between two jobs of a device. */
  private pauseMs(): number {
    const { minIntervalMs, jitterMs } = this.options
    return minIntervalMs + (jitterMs > 0 ? Math.floor(Math.random() * (jitterMs + 1)) : 0)
  }
}

// --- Internal types ---

interface DeviceQueue {
  queue: PQueue
  /** Jobs waiting or running (not answered yet): the queue's length for its limit. */
  unsettled: number
  /** When a job last joined or left (for dropping idle queues). */
  usedAt: number
}

/** One job and its caller's answer, which the job, its time-out or a stall gives first. */
class Task {
  state: 'queued' | 'running' | 'done' = 'queued'
  /** Tells the deadline the task has been answered. */
  answered: () => void = () => {}
  /** Settles when the running job settles or is given up on (the device's turn ends). */
  readonly outcome: Promise<void>
  private endTurn!: () => void

  constructor(
    private readonly job: () => Promise<unknown>,
    private readonly resolve: (value: unknown) => void,
    private readonly reject: (err: unknown) => void,
    private readonly onSettled: () => void,
    /** When a job still waiting is dropped unsent (the deadline sweep may come round a little later). */
    private readonly expiresAt: number,
  ) {
    this.outcome = new Promise(end => (this.endTurn = end))
  }

  /** Start the job when it is still waiting; false when it was already answered. */
  start(): boolean {
    if (this.state !== 'queued') return false
    if (this.expiresAt <= Date.now()) {
      this.expire() // past its time-out, though the deadline sweep has not come round to it yet: never run either
      return false
    }
    this.state = 'running'
    let work: Promise<unknown>
    try {
      work = this.job()
    } catch (err) {
      work = Promise.reject(err)
    }
    work.then(
      value => this.settle(() => this.resolve(value)),
      err => this.settle(() => this.reject(err)),
    )
    return true
  }

  /** The deadline passed: still waiting means dropped unsent, running means stalled (the queue moves on). */
  expire(): void {
    if (this.state === 'done') return
    const code = this.state === 'running' ? 'send-stalled' : 'send-queue-timeout'
    this.finish()
    this.reject(new GatewayError(code))
  }

  private settle(answer: () => void): void {
    if (this.state !== 'running') return
    this.finish()
    answer()
  }

  private finish(): void {
    this.state = 'done'
    this.answered()
    this.onSettled()
    this.endTurn()
  }
}
