import type { Logger } from '../logger.ts'
import type { SpillFile } from './spill-file.ts'

interface RetryBufferOptions<T> {
  /** What is kept, for the logs (`incoming events`, `webhook events`). */
  what: string
  /** Do the work of one item; throws while the store is down (the item is then offered again later). */
  process: (item: T) => Promise<void>
  logger: Logger
  /** Items kept in memory; past it they go to the spill file (default 1,000). */
  memoryLimit?: number
  /** Where items past the memory limit go, oldest first; without one they are lost (and logged). */
  spill?: SpillFile
  /** Largest spill file; past it new items are lost (and logged). Default 256 MB. */
  spillLimitBytes?: number
}

/**
 * Work the store refused (it was down), kept in arrival order (oldest in memory, the rest in a spill
 * file) and offered again, backing off from 1 s to 30 s, until the store takes it. While anything
 * waits, callers `keep` new items behind it, so the order of events holds across an outage.
 */
export class RetryBuffer<T> {
  private readonly memory: T[] = []
  private readonly memoryLimit: number
  private timer: NodeJS.Timeout | undefined
  private delayMs = RETRY_FIRST_MS
  private flushing: Promise<void> | undefined
  private closed = false

  constructor(private readonly options: RetryBufferOptions<T>) {
    this.memoryLimit = options.memoryLimit ?? 1_000
  }

  /** Replay what a gone process of this host left in its spill file (call once, at start). */
  async start(): Promise<void> {
    if (!this.options.spill) return
    await this.options.spill.prepare()
    if (this.options.spill.size > 0) {
      this.options.logger.warn({ count: this.options.spill.size }, `replaying ${this.options.what} left in a spill file`)
      this.schedule(0)
    }
  }

  /** Items waiting (in memory and spilled): a new item must be kept too, behind them. */
  get size(): number {
    return this.memory.length + (this.options.spill?.size ?? 0)
  }

  /** Whether anything waits. */
  get waiting(): boolean {
    return this.size > 0
  }

  /** Keep an item the store refused (or one that must wait behind those), to be offered again. */
  keep(item: T, err?: unknown): void {
    const { spill, logger, what } = this.options
    if (this.size === 0) logger.warn({ err }, `the store did not take ${what}; keeping them until it does`)
    if (this.memory.length < this.memoryLimit && (spill?.size ?? 0) === 0) this.memory.push(item)
    else if (spill && spill.sizeBytes < (this.options.spillLimitBytes ?? 256 * 2 ** 20)) {
      spill.append([item]).catch(cause => logger.error({ err: cause }, `${what} lost: the spill file could not be written`))
    } else logger.error({ err }, `${what} lost: the store is down and the buffer is full`)
    this.schedule(this.delayMs)
  }

  /** Offer what waits once more; what the store still refuses stays in the spill file, or is logged as lost. */
  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.timer)
    await this.flush()
    if (this.memory.length === 0) return
    if (this.options.spill) {
      const spilled = await this.options.spill.read(Number.MAX_SAFE_INTEGER)
      await this.options.spill.append([...this.memory.splice(0), ...spilled])
      this.options.logger.error(
        { count: this.options.spill.size, file: this.options.spill.path },
        `${this.options.what} kept in a spill file: the store was still down when the gateway stopped`,
      )
    } else this.options.logger.error({ count: this.memory.length }, `${this.options.what} lost: the store was still down when the gateway stopped`)
  }

  private schedule(delayMs: number): void {
    if (this.timer || this.closed) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      void this.flush().then(() => {
        if (this.waiting) this.schedule(this.delayMs)
      })
    }, delayMs)
    this.timer.unref()
  }

  /** Offer what waits, oldest first; stop at the first refusal (the store is still down) and back off. */
  private flush(): Promise<void> {
    this.flushing ??= (async () => {
      try {
        for (;;) {
          if (this.memory.length === 0 && this.options.spill && this.options.spill.size > 0)
            this.memory.push(...((await this.options.spill.read(this.memoryLimit)) as T[]))
          const item = this.memory[0]
          if (item === undefined) break
          try {
            await this.options.process(item)
          } catch {
            this.delayMs = Math.min(this.delayMs * 2, RETRY_MAX_MS)
            return
          }
          this.memory.shift()
        }
        if (this.delayMs !== RETRY_FIRST_MS) this.options.logger.info({}, `${this.options.what} kept while the store was down are done now`)
        this.delayMs = RETRY_FIRST_MS
      } finally {
        this.flushing = undefined
      }
    })()
    return this.flushing
  }
}

const RETRY_FIRST_MS = 1000
const RETRY_MAX_MS = 30_000
