import { GatewayError } from '../../errors.ts'
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
 * One queue per device, so the sends of a device reach the network one at a time and in order,
 * paced by `minIntervalMs` plus jitter. Every job answers within `timeoutMs`: a job still waiting is
 * dropped (never sent) with 504, a job that stalls on the network is answered 504 and the queue
 * moves on. A queue is deleted once it has been idle for a minute, so the map holds only devices
 * with recent work (and a busy device does not build a new queue for every send).
 *
 * Hand-rolled rather than a p-queue per device: a send is a few microseconds of work, and p-queue's
 * events, interval checks and promise per job cost about as much again. A job starts in the very
 * turn it is added when its device is idle.
 */
export class SendQueues {
  private readonly queues = new Map<string, DeviceQueue>()
  private readonly deadlines: Deadlines
  private sweeper: NodeJS.Timeout | undefined
  private closed = false

  constructor(private readonly options: SendQueueOptions) {
    this.deadlines = new Deadlines(options.timeoutMs)
  }

  /** Run `job` in the device's queue; resolves or rejects with its result, or 504 past the timeout. */
  run<T>(deviceId: string, job: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new GatewayError('shutting-down'))
    const queue = this.queueOf(deviceId)
    if (queue.unsettled >= this.options.limit) {
      return Promise.reject(new GatewayError('send-queue-full', { retryAfterSeconds: 5 }))
    }
    return new Promise<T>((resolve, reject) => {
      const task: Task = { job, resolve: resolve as (value: unknown) => void, reject, state: 'queued', answered: NOTHING, expiresAt: Date.now() + this.options.timeoutMs }
      task.answered = this.deadlines.watch(() => {
        if (task.state === 'done') return
        const running = task.state === 'running'
        this.expire(queue, task)
        if (running) this.release(queue)
      })
      queue.unsettled++
      queue.tasks.push(task)
      if (!queue.busy) this.next(queue)
    })
  }

  /** Stop taking jobs and wait (at most `timeoutMs`) for the queued ones to finish. */
  async close(): Promise<void> {
    this.closed = true
    const idle = Promise.all([...this.queues.values()].map(queue => (queue.busy ? new Promise<void>(resolve => queue.onIdle.push(resolve)) : undefined)))
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

  private queueOf(deviceId: string): DeviceQueue {
    let queue = this.queues.get(deviceId)
    if (!queue) {
      queue = { tasks: [], head: 0, busy: false, unsettled: 0, idleSince: Date.now(), onIdle: [] }
      this.queues.set(deviceId, queue)
      this.sweeper ??= setInterval(() => this.dropIdle(), this.idleQueueMs / 2).unref()
    }
    return queue
  }

  /** Start the device's next waiting job, or mark the queue idle. */
  private next(queue: DeviceQueue): void {
    while (queue.head < queue.tasks.length) {
      const task = queue.tasks[queue.head]!
      queue.tasks[queue.head++] = undefined
      if (task.state !== 'queued') continue // given up on while it waited: never run
      if (task.expiresAt <= Date.now()) {
        // Past its time-out, though the deadline sweep has not come round to it yet: never run either.
        this.expire(queue, task)
        continue
      }
      if (queue.head >= COMPACT_AFTER) this.compact(queue)
      queue.busy = true
      task.state = 'running'
      let work: Promise<unknown>
      try {
        work = task.job()
      } catch (err) {
        work = Promise.reject(err)
      }
      work.then(
        value => this.settle(queue, task, () => task.resolve(value)),
        err => this.settle(queue, task, () => task.reject(err)),
      )
      return
    }
    queue.tasks.length = 0
    queue.head = 0
    queue.busy = false
    queue.idleSince = Date.now()
    for (const resolve of queue.onIdle.splice(0)) resolve()
  }

  /** A running job's outcome: answered, unless the timeout already answered it. */
  private settle(queue: DeviceQueue, task: Task, answer: () => void): void {
    if (task.state !== 'running') return
    this.finish(queue, task)
    answer()
    this.release(queue)
  }

  /** Answer a task 504: stalled when it was running, dropped unsent when it was still waiting. */
  private expire(queue: DeviceQueue, task: Task): void {
    const running = task.state === 'running'
    this.finish(queue, task)
    task.reject(new GatewayError(running ? 'send-stalled' : 'send-queue-timeout'))
  }

  /**
   * Drop the taken slots before `head`: a device that always has work waiting never drains (where
   * the array is reset), so without this its array would grow by a slot per send.
   */
  private compact(queue: DeviceQueue): void {
    queue.tasks.copyWithin(0, queue.head)
    queue.tasks.length -= queue.head
    queue.head = 0
  }

  private finish(queue: DeviceQueue, task: Task): void {
    task.state = 'done'
    task.answered()
    queue.unsettled--
  }

  /** The device's slot is free: after the pacing pause, if any, the next job starts. */
  private release(queue: DeviceQueue): void {
    const ms = this.pauseMs()
    if (ms <= 0) return this.next(queue)
    setTimeout(() => this.next(queue), ms)
  }

  private get idleQueueMs(): number {
    return this.options.idleQueueMs ?? 60_000
  }

  /** Delete the queues idle for idleQueueMs. */
  private dropIdle(): void {
    const before = Date.now() - this.idleQueueMs
    for (const [deviceId, queue] of this.queues) {
      if (!queue.busy && queue.idleSince <= before) this.queues.delete(deviceId)
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
  /** Jobs in order; those before `head` have been taken (their slots cleared). */
  tasks: (Task | undefined)[]
  head: number
  /** A job is running, or the pause after one has not ended. */
  busy: boolean
  /** Jobs waiting or running (not answered yet): the queue's length for its limit. */
  unsettled: number
  idleSince: number
  /** Waiting for the queue to go idle (close). */
  onIdle: (() => void)[]
}

interface Task {
  job: () => Promise<unknown>
  resolve: (value: unknown) => void
  reject: (err: unknown) => void
  state: 'queued' | 'running' | 'done'
  /** Tells the deadline the task has been answered. */
  answered: () => void
  /** When a task still waiting is dropped unsent (Date.now() ms). */
  expiresAt: number
}

/** Taken slots kept at the head of a device's task array before it is compacted. */
const COMPACT_AFTER = 1024

const NOTHING = () => {}
