import { appendFile, mkdir, open, readdir, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { appendFileTail, prependJsonLines } from '../file-lines.ts'
import type { Logger } from '../logger.ts'
import { hostTag, ownStamp, processAlive, type ProcessStamp } from './process-alive.ts'

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
  let closed = false
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
    if (delayMs !== RETRY_FIRST_MS) logger.info({}, `${what} kept while the store was down are done now`)
    delayMs = RETRY_FIRST_MS
    // Emptied by an offer of its own (the store answered again): the backed-off timer goes too, or the next outage's first retry would wait for it.
    clearTimeout(timer)
    timer = undefined
  }
  // One offer at a time; it ends in a later tick (one with nothing to offer too), after `flushing` was set.
  const flush = (): Promise<void> => (flushing ??= offer().finally(() => (flushing = undefined)))
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
    /** The offer under way, or with `now` (the store answers again) a new one at once: true once it left nothing waiting; false at once without one. */
    async offered(now = false): Promise<boolean> {
      if (now && !closed) void flush()
      return flushing !== undefined && (await flushing, size() === 0)
    },
    /** Keep an item the store refused (or one that must wait behind those), to be offered again. */
    keep(item: T, err?: unknown): void {
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
        spill?.release()
      }
    },
  }
}

const [RETRY_FIRST_MS, RETRY_MAX_MS, MEMORY_MAX_BYTES] = [1000, 30_000, 64 * 2 ** 20]

let lastTakenStamp = 0

/** The files the SpillFiles of this process hold (a file is let go by `release`, its buffer closed). */
const heldSpillFiles = new Set<string>()

/** SpillFiles made in this process per folder and name: each one past the first gets a file of its own (`.<n>` before `.jsonl`). */
const spillFilesMade = new Map<string, number>()

/** The time (ms) in a `.taken` file's name, never the same twice in this process: two takeovers in one millisecond renamed onto one name, the second replaced a file the first had to leave (its copy failed) or failed itself, left untaken. */
function takenStamp(): number {
  return (lastTakenStamp = Math.max(Date.now(), lastTakenStamp + 1))
}

/** A file a gone process spilled that SpillFile.prepare could not take over, and why. */
interface SpillTakeoverFailure {
  file: string
  err: unknown
}

/**
 * A RetryBuffer's overflow: a JSON-lines file per buffer (`<name>-<host>-<pid>[-<ticks>-<boot>][.<n>].jsonl`: `.<n>` for the
 * n-th one of that name in the process, two gateways of one process on one store, or one made after another closed), taking over
 * the files of gone processes of this host and those this process's closed buffers let go, with the `.taken` ones their killed
 * takeovers left and the `.closing` one a crashed close() left (its events in memory are only there; some may be recorded twice, none is lost).
 */
export class SpillFile {
  readonly path: string
  /** Byte offset of the first line not read back yet. */
  private offset = 0
  /** Lines written and not read back yet. */
  private unread = 0
  private bytes = 0
  private writing: Promise<void> = Promise.resolve()
  private prepared: Promise<SpillTakeoverFailure[]> | undefined

  constructor(
    private readonly dir: string,
    private readonly name: string,
  ) {
    const made = spillFilesMade.get(join(dir, name)) ?? 0
    spillFilesMade.set(join(dir, name), made + 1)
    this.path = join(dir, `${name}-${hostTag()}-${stampTag(ownStamp())}${made === 0 ? '' : `.${made}`}.jsonl`)
    heldSpillFiles.add(this.path)
  }

  /** Let go of the file (its buffer closed): what it still holds is taken over by the next SpillFile of this name made in this process, or at the next start. */
  release(): void {
    heldSpillFiles.delete(this.path)
  }

  /** Lines waiting to be read back. */
  get size(): number {
    return this.unread
  }

  /** Bytes of the file (read lines included, until it is emptied). */
  get sizeBytes(): number {
    return this.bytes
  }

  /**
   * Create the folder (0700) and take over the files left by gone processes of this host and those this process let go, in arrival order (byArrival; each renamed to a `.taken` name of its own first); resolves with the files that could not be
   * taken over (each skipped and left where it is for a later start: one that cannot be read must not stop this process spilling, nor
   * what waits behind the buffer from going out). A folder that cannot be made rejects, and is tried again at the next call.
   */
  prepare(): Promise<SpillTakeoverFailure[]> {
    this.prepared ??= (async () => {
      await mkdir(this.dir, { recursive: true, mode: 0o700 })
      const failures: SpillTakeoverFailure[] = []
      for (const file of (await readdir(this.dir)).sort(byArrival)) {
        const owner = new RegExp(`^${this.name}-([^-]+)-(\\d+)(?:-(\\d+)-([0-9a-f]{8}))?(?:\\.\\d+)?\\.jsonl(\\.closing|\\.\\d+\\.taken)?$`).exec(file)
        if (!owner || file === this.path.slice(this.dir.length + 1) || owner[1] !== hostTag()) continue
        // This process's own: taken over once no SpillFile of it holds the file it came from (its buffer closed); another's once that process is gone.
        const ofThisProcess = file.startsWith(`${this.name}-${owner[1]}-${stampTag(ownStamp())}.`)
        if (ofThisProcess ? heldSpillFiles.has(join(this.dir, file.replace(/\.closing$|\.\d+\.taken$/, ''))) : processAlive(stampOfFile(owner))) continue
        const taken = `${this.path}.${takenStamp()}.taken`
        if ((await rename(join(this.dir, file), taken).catch(() => false)) === false) continue // another process took it first
        try {
          const { lines, bytes } = await appendFileTail(taken, 0, this.path)
          ;[this.unread, this.bytes] = [this.unread + lines, this.bytes + bytes]
          await rm(taken, { force: true })
        } catch (err) {
          failures.push({ file: taken, err }) // kept as a `.taken` file: the next start takes it over again
        }
      }
      return failures
    })().catch(err => {
      this.prepared = undefined
      throw err
    })
    return this.prepared
  }

  /** Append items as lines (in call order). One that fails (a full disk) loses its own items only: they are not counted, and later appends and reads go on. */
  append(items: unknown[]): Promise<void> {
    const text = items.map(item => JSON.stringify(item)).join('\n') + '\n'
    this.unread += items.length
    this.bytes += Buffer.byteLength(text)
    const written = this.writing.then(() => this.prepare()).then(() => appendFile(this.path, text, { mode: 0o600 }))
    this.writing = written.catch(() => void (this.unread = Math.max(0, this.unread - items.length)))
    return written
  }

  /** Put items back before the unread lines (at close: those read back, not done), rewriting the file a line or a 1 MiB block at a time. */
  putBack(items: unknown[]): Promise<void> {
    this.unread += items.length // at once, as append does: an item kept meanwhile is spilled behind them
    const done = this.writing.then(async () => void ([this.offset, this.bytes] = [0, await prependJsonLines(this.path, this.offset, items)]))
    this.writing = done.catch(() => void (this.unread = Math.max(0, this.unread - items.length)))
    return done
  }

  /** Up to `max` of the oldest unread items, and no more once `maxBytes` of lines are read (the file is deleted once all are read). */
  async read(max: number, maxBytes = Infinity): Promise<unknown[]> {
    await this.writing
    if (this.unread === 0) return []
    const [handle, items, from] = [await open(this.path, 'r'), [] as unknown[], this.offset]
    const full = () => items.length === max || this.offset - from >= maxBytes
    try {
      let block = Buffer.alloc(1 << 20)
      while (!full()) {
        const { bytesRead } = await handle.read(block, 0, block.length, this.offset)
        if (bytesRead === 0) break
        const text = block.subarray(0, bytesRead).toString('utf8')
        const end = text.lastIndexOf('\n')
        if (end < 0) {
          if (bytesRead < block.length) break // a last line without its newline: not written whole yet
          block = Buffer.alloc(block.length * 2) // a line longer than the block
          continue
        }
        for (const line of text.slice(0, end).split('\n')) {
          if (full()) break
          this.offset += Buffer.byteLength(line) + 1
          if (line.trim() === '') continue
          try {
            items.push(JSON.parse(line))
          } catch {
            items.push(undefined) // a line cut short (its process killed mid-append, a full disk): counted as read, dropped
          }
        }
      }
    } finally {
      await handle.close()
    }
    this.unread = Math.max(0, this.unread - items.length)
    // Emptied in the write chain: an append made meanwhile (unread again) keeps the file, a later one is written after the deletion.
    const emptied = this.writing.then(() => (this.unread === 0 ? ((this.offset = this.bytes = 0), rm(this.path, { force: true })) : undefined))
    this.writing = emptied.then(undefined, () => undefined)
    await emptied
    return items.filter(item => item !== undefined)
  }
}

/** Spill files in the order their events arrived: of one file, what a killed takeover was moving into it (`.<time>.taken`, oldest first), then what a crashed close() was putting back in front of its unread lines (`.closing`), then the file itself. */
function byArrival(a: string, b: string): number {
  const [x, y] = [arrivalKey(a), arrivalKey(b)]
  return x < y ? -1 : x > y ? 1 : 0
}

function arrivalKey(file: string): string {
  const leftover = /^(.*\.jsonl)(?:\.(\d+)\.taken|(\.closing))$/.exec(file)
  if (!leftover) return `${file}\u0000 2`
  return leftover[2] !== undefined ? `${leftover[1]}\u0000 0 ${leftover[2].padStart(16, '0')}` : `${leftover[1]}\u0000 1`
}

/** `<pid>-<start ticks>-<boot id, 8 characters>`, or the pid alone where the platform tells no start time. */
function stampTag({ pid, startTicks, bootId }: ProcessStamp): string {
  return startTicks !== undefined && bootId ? `${pid}-${startTicks}-${bootId.slice(0, 8)}` : String(pid)
}

/** The stamp of the process that named a file (`owner`: the match of host, pid, start ticks and boot id). */
function stampOfFile(owner: RegExpExecArray): ProcessStamp {
  const pid = Number(owner[2])
  if (owner[3] === undefined) return { pid }
  const current = ownStamp().bootId // the file names its first 8 characters
  return { pid, startTicks: Number(owner[3]), bootId: current?.startsWith(owner[4]!) ? current : owner[4]! }
}
