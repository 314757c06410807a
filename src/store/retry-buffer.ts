import type { Logger } from '../logger.ts'
import type { SpillFile } from './spill-file.ts'

interface RetryBufferOptions<T> {
  /** What is kept, for the logs (`incoming events`, `webhook events`). */
  what: string
  /** Do the work of one item; throws while the store is down (the item is then offered again later). */
  process: (item: T) => Promise<void>
  logger: Logger
  /** Items kept in memory; past it, or past 64 MiB of JSON kept since the buffer was last empty, they go to the spill file (default 1,000). */
  memoryLimit?: number
  /** Where items past the memory limit go, oldest first; without one they are lost (and logged). */
  spill?: SpillFile
  /** Largest spill file; past it new items are lost (and logged). Default 256 MB. */
  spillLimitBytes?: number
}

/** Work the store refused, kept in arrival order (memory, then a spill file) and offered again with backoff (1 s to 30 s); new items wait behind it. */
export type RetryBuffer<T> = ReturnType<typeof createRetryBuffer<T>>

/** A retry buffer over `options.process`. */
export function createRetryBuffer<T>(options: RetryBufferOptions<T>) {
  const { spill, logger, what } = options
  const memory: T[] = []
  const memoryLimit = options.memoryLimit ?? 1_000
  let timer: NodeJS.Timeout | undefined
  let [delayMs, memoryBytes] = [RETRY_FIRST_MS, 0] // memoryBytes: JSON bytes kept since the buffer was last empty (inline media make items large)
  let flushing: Promise<void> | undefined
  let [closed, putAwayDone] = [false, false] // putAwayDone: close() ended, its spill file let go: nothing kept now is written anywhere
  let answeredSince = false // the store answered while an offer was under way
  const size = () => memory.length + (spill?.size ?? 0)
  const schedule = (ms: number): void => {
    if (timer || closed) return
    timer = setTimeout(() => {
      timer = undefined
      void flush().then(() => size() > 0 && schedule(delayMs))
    }, ms).unref()
  }
  // Offer what waits, oldest first; stop at the first refusal (the store is still down, or the spill file unreadable for now: never thrown out of the timer) and back off.
  const offer = async (): Promise<void> => {
    for (;;) {
      let item: T | undefined
      try {
        if (memory.length === 0 && spill && spill.size > 0) memory.push(...((await spill.read(memoryLimit, MEMORY_MAX_BYTES)) as T[]))
        if ((item = memory[0]) === undefined) break
        await options.process(item)
      } catch (err) {
        if (item === undefined) logger.error({ err, file: spill?.path }, `${what} could not be read back from the spill file; trying again`)
        delayMs = Math.min(delayMs * 2, RETRY_MAX_MS)
        return
      }
      memory.shift()
    }
    // All done, those read back from the spill file too: only now is it deleted (a process killed before leaves them on disk, done again at the next start).
    await spill?.forgetRead().catch(err => logger.warn({ err, file: spill.path }, `a spill file of ${what} all done could not be deleted`))
    if (delayMs !== RETRY_FIRST_MS) logger.info({}, `${what} kept while the store was down are done now`)
    delayMs = RETRY_FIRST_MS
    // Emptied by an offer of its own (the store answered again): the backed-off timer goes too, or the next outage's first retry would wait for it.
    clearTimeout(timer)
    timer = undefined
  }
  // One offer at a time; it ends in a later tick (one with nothing to offer too), after `flushing` was set. The store answered
  // meanwhile (`answeredSince`): an offer it refused may have had its refusal before, so what is left is offered once more at once.
  const offerWhileAnswered = async (): Promise<void> => {
    do {
      answeredSince = false
      await offer()
    } while (answeredSince && size() > 0 && !closed)
  }
  const flush = (): Promise<void> => (flushing ??= offerWhileAnswered().finally(() => (flushing = undefined)))
  // At close: offer what waits once more, then what is left into the spill file.
  const putAway = async (): Promise<void> => {
    await flush()
    if (memory.length === 0) return
    if (!spill) return void logger.error({ count: memory.length }, `${what} lost: the store was still down when the gateway stopped`)
    const items = memory.splice(0)
    try {
      await spill.putBack(items) // before the unread lines: it is older
      logger.error({ count: spill.size, file: spill.path }, `${what} kept in a spill file: the store was still down when the gateway stopped`)
    } catch (err) {
      // The file's older lines stay; of these, those written before the failure are in its `.closing` file, replayed at the next start.
      logger.error(
        { err, count: items.length, file: spill.path },
        `${what} lost (up to this many): the store was still down when the gateway stopped and the spill file could not be written`,
      )
    }
  }
  return {
    /** Replay what a gone process of this host, or a closed buffer of this process, left in its spill file (call once, at start). */
    async start(): Promise<void> {
      for (const { file, err } of (await spill?.prepare()) ?? [])
        logger.error({ err, file }, `${what} a gone process spilled could not be taken over; left in that file for the next start`)
      if (!spill?.size) return
      logger.warn({ count: spill.size }, `replaying ${what} left in a spill file`)
      schedule(0)
    },
    /** Items waiting (in memory and spilled): while there are any, a new item must be kept too, behind them. */
    get size(): number {
      return size()
    },
    /** The offer under way, or with `now` (the store answers again) a new one at once (after the one under way, when that one leaves items waiting): true once it left nothing waiting; false at once without one. */
    async offered(now = false): Promise<boolean> {
      if (now && !closed) {
        if (flushing) answeredSince = true
        void flush()
      }
      return flushing !== undefined && (await flushing, size() === 0)
    },
    /** Keep an item the store refused (or one that must wait behind those), to be offered again. */
    keep(item: T, err?: unknown): void {
      if (putAwayDone) return void logger.error({ err }, `${what} lost: kept after the stop put the others away`)
      if (size() === 0) logger.warn({ err }, `the store did not take ${what}; keeping them until it does`)
      memoryBytes = (size() === 0 ? 0 : memoryBytes) + Buffer.byteLength(JSON.stringify(item) ?? '')
      if (memory.length < memoryLimit && memoryBytes <= MEMORY_MAX_BYTES && (spill?.size ?? 0) === 0) memory.push(item)
      else if (spill && spill.sizeBytes < (options.spillLimitBytes ?? 256 * 2 ** 20))
        spill.append([item]).catch(cause => logger.error({ err: cause }, `${what} lost: the spill file could not be written`))
      else logger.error({ err }, `${what} lost: the store is down and the buffer is full`)
      schedule(delayMs)
    },
    /** Offer what waits once more; what the store still refuses stays in the spill file, or is logged as lost (a spill file that cannot be written, a full disk: never thrown, so the rest of a shutdown runs). */
    async close(): Promise<void> {
      closed = true
      clearTimeout(timer)
      try {
        await putAway()
      } finally {
        putAwayDone = true
        spill?.release()
      }
    },
  }
}

const [RETRY_FIRST_MS, RETRY_MAX_MS, MEMORY_MAX_BYTES] = [1000, 30_000, 64 * 2 ** 20]
