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

/** One p-queue per device (concurrency 1): the sends of a device reach the network one at a time, in order, paced by `minIntervalMs` plus jitter. Every job answers within `sendTimeoutMs` (docs/limits.md): still waiting, `send-queue-timeout` and never sent; stalled, `send-stalled` and the queue moves on. A queue idle for `idleQueueMs` is dropped. Fast path: with no pause configured, a job that finds its device with nothing running or waiting (no unsettled job, p-queue empty and not pending) runs at once outside p-queue, its turn recorded on the device (`direct`); a job joining meanwhile goes through p-queue as ever, its task first waiting for that turn to end, so order and one-at-a-time hold. An idle device's send then makes 2 promises (the caller's, the job's `then`) instead of 8 through p-queue (async_hooks, 1,000 sequential sends). */
export class SendQueues {
  private readonly queues = new Map<string, DeviceQueue>()
  private readonly deadlines: Deadlines
  private sweeper: NodeJS.Timeout | undefined
  private closed = false
  private readonly idleQueueMs: number
  /** No pause between jobs: an idle device may run a job outside p-queue. */
  private readonly unpaced: boolean

  constructor(private readonly options: SendQueueOptions) {
    this.deadlines = new Deadlines(options.sendTimeoutMs)
    this.idleQueueMs = options.idleQueueMs ?? 60_000
    this.unpaced = options.minIntervalMs === 0 && options.intervalJitterMs === 0
  }

  /** Run `job` in the device's queue; resolves or rejects with its result, or a 504 code past the timeout. */
  run<T>(deviceId: string, job: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new GatewayError('shutting-down'))
    const device = this.queueOf(deviceId)
    if (device.unsettled >= this.options.sendQueueLimit) return Promise.reject(new GatewayError('send-queue-full', { retryAfterSeconds: 5 }))
    // Nothing running or waiting: a direct job is unsettled until answered; p-queue's size and pending add a guard (with no pause, its leftovers once nothing is unsettled are tasks that only end).
    const direct = this.unpaced && device.unsettled === 0 && device.queue.size === 0 && device.queue.pending === 0
    device.unsettled++
    const expiresAt = (device.usedAt = Date.now()) + this.options.sendTimeoutMs
    return new Promise<T>((resolve, reject) => {
      let state: 'queued' | 'running' | 'done' = 'queued'
      let endTurn: (() => void) | undefined // a queued job's turn in p-queue (a direct job's is on the device)
      // The job's answer, its time-out or a stall: whichever comes first answers the caller and ends the device's turn.
      const answer = (ok: boolean, outcome: unknown) => {
        if (state === 'done') return
        state = 'done'
        answered()
        device.unsettled--
        if (direct) endDirect(device)
        else endTurn?.()
        if (ok) resolve(outcome as T)
        else reject(outcome)
      }
      // An inline closure, not a named one: under tsx (esbuild keepNames) a named closure costs an Object.defineProperty a send.
      const answered = this.deadlines.watch(() => answer(false, new GatewayError(state === 'running' ? 'send-stalled' : 'send-queue-timeout')))
      const start = () => {
        state = 'running'
        invoke(job).then(
          value => answer(true, value),
          (err: unknown) => answer(false, err),
        )
      }
      if (direct) {
        device.direct = true // recorded before the job starts: a job it adds to its own device queues behind it
        return start()
      }
      const queued = () => {
        // Already answered, or past its time-out though its timer has not fired yet: never run.
        if (state !== 'queued') return
        if (expiresAt <= Date.now()) return answer(false, new GatewayError('send-queue-timeout'))
        const turn = new Promise<void>(end => ((endTurn = end), start()))
        const pause = this.options.minIntervalMs + (this.options.intervalJitterMs > 0 ? Math.floor(Math.random() * (this.options.intervalJitterMs + 1)) : 0)
        return pause > 0 ? turn.then(() => new Promise(resolve => setTimeout(resolve, pause))) : turn // not an async function: a promise and a turn less a send
      }
      // Joined while a direct job runs: p-queue's head waits for its turn to end (only the head: p-queue runs one task at a time).
      void device.queue.add(() => (device.direct ? directEnded(device).then(queued) : queued()))
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
    const idle = (device: DeviceQueue) => (device.direct ? Promise.all([directEnded(device), device.queue.onIdle()]) : device.queue.onIdle())
    await Promise.race([Promise.all([...this.queues.values()].map(idle)), limit])
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
      device = { queue: new PQueue({ concurrency: 1 }), unsettled: 0, usedAt: Date.now(), direct: false }
      this.queues.set(deviceId, device)
      this.sweeper ??= setInterval(() => this.dropIdle(), this.idleQueueMs / 2).unref()
    }
    return device
  }

  /** Delete the queues that have had nothing to do for idleQueueMs. */
  private dropIdle(): void {
    const before = Date.now() - this.idleQueueMs
    for (const [deviceId, device] of this.queues) {
      if (device.unsettled === 0 && !device.direct && device.queue.size === 0 && device.queue.pending === 0 && device.usedAt <= before)
        this.queues.delete(deviceId)
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
  /** A job runs outside p-queue (the fast path) and has not answered yet. */
  direct: boolean
  /** Settles when the direct job's turn ends; made only when something waits for it. */
  directEnded?: Promise<void>
  /** Settles `directEnded`. */
  endDirect?: () => void
}

/** The running direct job's turn, as a promise (one for all its waiters: p-queue's head task, close()). */
function directEnded(device: DeviceQueue): Promise<void> {
  return (device.directEnded ??= new Promise<void>(end => (device.endDirect = end)))
}

/** The direct job answered: the device is free for p-queue's head, or the next direct job. */
function endDirect(device: DeviceQueue): void {
  const end = device.endDirect
  device.direct = false
  device.directEnded = device.endDirect = undefined
  end?.()
}
