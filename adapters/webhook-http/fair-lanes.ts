import type PQueue from 'p-queue'
import { putBounded } from 'zapgate/adapter-kit'

/** How many deliveries may be in flight or waiting, per device, per receiver host and in all. */
export interface LaneLimits {
  /** In flight per device (and receiver host): below `perHost`, so a hung device leaves slots to the others. */
  perDevice: number
  /** In flight per receiver host, whichever devices they are for. */
  perHost: number
  /** In flight in all. */
  overall: number
  /** Waiting per receiver host (not yet in flight); past it a delivery fails at once. */
  maxWaitingPerHost: number
}

/** Devices kept narrowed (host and device pairs): past it the oldest goes back to `perDevice`. */
const MAX_NARROWED = 10_000

/** A receiver host's slots, the lines of the devices delivering to it, and how many of their jobs wait. */
interface HostLane {
  slots: PQueue
  lines: Map<string, PQueue>
  waiting: number
}

/**
 * Fair, bounded lanes of deliveries: a p-queue per device (per receiver host) lets at most
 * `perDevice` of its jobs on to the host's p-queue (`perHost` slots), whose jobs take one of the
 * `overall` slots. A device whose receiver hangs holds at most `perDevice` of its host's slots; its
 * other jobs wait in its own line, never in front of another device's. Within a line, jobs start in
 * the order they came. A line is dropped when it runs idle, a host's lane with its last line.
 * A device `narrow`ed on a host (its receiver there stopped answering) runs 1 job at a time there
 * until `widen`ed, its line dropped and made again meanwhile or not: n such devices hold n slots.
 */
export class FairLanes {
  private readonly hosts = new Map<string, HostLane>()
  private readonly overall: PQueue
  /** The narrowed devices, by `${host} ${device}` (a URL's host has no space), oldest first. */
  private readonly narrowed = new Map<string, true>()

  constructor(
    private readonly PQueueClass: typeof PQueue,
    private readonly limits: LaneLimits,
  ) {
    this.overall = new PQueueClass({ concurrency: limits.overall })
  }

  /**
   * Run `job` once its device, its host and the whole sender each have a free slot; resolves with its
   * result. Throws at once (no job started) when `maxWaitingPerHost` jobs already wait for `host`.
   */
  run<T>(host: string, device: string, job: () => Promise<T>): Promise<T> {
    const lane = this.laneOf(host)
    if (lane.waiting >= this.limits.maxWaitingPerHost) {
      this.dropIfIdle(host, lane)
      throw new Error(`receiver ${host} is busy (${lane.waiting} deliveries waiting)`)
    }
    lane.waiting++
    const start = () => {
      lane.waiting--
      return job()
    }
    return this.lineOf(host, lane, device).add(() => lane.slots.add(() => this.overall.add(start))) as Promise<T>
  }

  /** A delivery of `device` to `host` got no answer: from now on its line there runs 1 job at a time. */
  narrow(host: string, device: string): void {
    putBounded(this.narrowed, `${host} ${device}`, true, MAX_NARROWED)
    const line = this.hosts.get(host)?.lines.get(device)
    if (line) line.concurrency = 1
  }

  /** A delivery of `device` to `host` got an answer: a narrowed line there runs `perDevice` jobs again. */
  widen(host: string, device: string): void {
    if (!this.narrowed.delete(`${host} ${device}`)) return
    const line = this.hosts.get(host)?.lines.get(device)
    if (line) line.concurrency = this.limits.perDevice
  }

  /** Resolves when every job given so far has settled. */
  async onIdle(): Promise<void> {
    await Promise.all([...this.hosts.values()].flatMap(lane => [...lane.lines.values()].map(line => line.onIdle())))
  }

  /** Receiver hosts with a lane, and device lines in all (what is held in memory). */
  get size(): { hosts: number; lines: number } {
    let lines = 0
    for (const lane of this.hosts.values()) lines += lane.lines.size
    return { hosts: this.hosts.size, lines }
  }

  // --- Internal helpers ---

  private laneOf(host: string): HostLane {
    let lane = this.hosts.get(host)
    if (!lane) this.hosts.set(host, (lane = { slots: new this.PQueueClass({ concurrency: this.limits.perHost }), lines: new Map(), waiting: 0 }))
    return lane
  }

  private lineOf(host: string, lane: HostLane, device: string): PQueue {
    let line = lane.lines.get(device)
    if (!line) {
      const created = new this.PQueueClass({ concurrency: this.narrowed.has(`${host} ${device}`) ? 1 : this.limits.perDevice })
      // Every job of a line passes through the host's and the overall queue: once the line is idle,
      // none of its jobs is anywhere, so the line can go (and the host's lane with its last line).
      created.on('idle', () => {
        if (lane.lines.get(device) !== created || created.size > 0 || created.pending > 0) return
        lane.lines.delete(device)
        this.dropIfIdle(host, lane)
      })
      lane.lines.set(device, (line = created))
    }
    return line
  }

  private dropIfIdle(host: string, lane: HostLane): void {
    if (lane.lines.size === 0 && lane.waiting === 0 && this.hosts.get(host) === lane) this.hosts.delete(host)
  }
}
