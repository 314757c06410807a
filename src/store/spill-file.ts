import { appendFile, mkdir, open, readdir, rename, rm, stat, truncate } from 'node:fs/promises'
import { join } from 'node:path'
import { appendFileTail, prependJsonLines } from '../file-lines.ts'
import { hostTag, ownStamp, processAlive, type ProcessStamp } from './process-alive.ts'

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
          const { lines, bytes } = await allOrNothing(this.path, () => appendFileTail(taken, 0, this.path))
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
    const written = this.writing.then(() => this.prepare()).then(() => allOrNothing(this.path, () => appendFile(this.path, text, { mode: 0o600 })))
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

  /** Up to `max` of the oldest unread items, and no more once `maxBytes` of lines are read. The file keeps them (a process killed before they are done leaves them to the next start) until `forgetRead`. */
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
        const data = block.subarray(0, bytesRead)
        const end = data.lastIndexOf(10)
        if (end < 0) {
          if (bytesRead < block.length) break // a last line without its newline: not written whole yet
          block = Buffer.alloc(block.length * 2) // a line longer than the block
          continue
        }
        // Counted in the file's bytes: a line cut inside a character decodes to more (U+FFFD), which would move the offset into the next line.
        for (let start = 0; start <= end && !full();) {
          const newline = data.indexOf(10, start)
          const line = data.toString('utf8', start, newline)
          this.offset += newline + 1 - start
          start = newline + 1
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
    return items.filter(item => item !== undefined)
  }

  /** The items read back are done (recorded): the file is deleted once none is unread. */
  forgetRead(): Promise<void> {
    // Emptied in the write chain: an append made meanwhile (unread again) keeps the file, a later one is written after the deletion.
    const emptied = this.writing.then(() =>
      this.unread === 0 && this.bytes > 0 ? ((this.offset = this.bytes = 0), rm(this.path, { force: true })) : undefined,
    )
    this.writing = emptied.then(undefined, () => undefined)
    return emptied
  }
}

/** Append to file `path` with `write`, all or nothing: the part of a write cut short (a full disk) is taken back, or the next append would go on its last line (losing its item too) and the file would hold lines it does not count. */
async function allOrNothing<T>(path: string, write: () => Promise<T>): Promise<T> {
  const size = await stat(path).then(
    file => file.size,
    (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? 0 : Promise.reject(err)),
  )
  try {
    return await write()
  } catch (err) {
    await truncate(path, size).catch(() => {})
    throw err
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
