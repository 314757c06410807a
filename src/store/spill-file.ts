import { appendFile, mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { hostTag, ownStamp, processAlive, type ProcessStamp } from './process-alive.ts'

/**
 * An append-only file of JSON lines, read back in order: the overflow of a RetryBuffer. Each process
 * writes its own file in `dir` (`<name>-<host>-<pid>[-<start ticks>-<boot id, 8 characters>].jsonl`);
 * at start it takes over, by a rename, the files of gone processes of this host (`processAlive`).
 */
export class SpillFile {
  readonly path: string
  /** Byte offset of the first line not read back yet. */
  private offset = 0
  /** Lines written and not read back yet. */
  private unread = 0
  private bytes = 0
  private writing: Promise<void> = Promise.resolve()
  private prepared: Promise<void> | undefined

  constructor(
    private readonly dir: string,
    private readonly name: string,
  ) {
    this.path = join(dir, `${name}-${hostTag()}-${stampTag(ownStamp())}.jsonl`)
  }

  /** Lines waiting to be read back. */
  get size(): number {
    return this.unread
  }

  /** Bytes of the file (read lines included, until it is emptied). */
  get sizeBytes(): number {
    return this.bytes
  }

  /** Create the folder (0700) and take over the files left by gone processes of this host. */
  prepare(): Promise<void> {
    this.prepared ??= (async () => {
      await mkdir(this.dir, { recursive: true, mode: 0o700 })
      for (const file of await readdir(this.dir)) {
        const owner = new RegExp(`^${this.name}-([^-]+)-(\\d+)(?:-(\\d+)-([0-9a-f]{8}))?\\.jsonl$`).exec(file)
        if (!owner || file === this.path.slice(this.dir.length + 1)) continue
        if (owner[1] !== hostTag() || processAlive(stampOfFile(owner))) continue
        const taken = `${this.path}.${Date.now()}.taken`
        try {
          await rename(join(this.dir, file), taken)
        } catch {
          continue // another process took it first
        }
        await this.adopt(taken)
      }
    })()
    return this.prepared
  }

  /** Append items as lines (in call order). */
  append(items: unknown[]): Promise<void> {
    const text = items.map(item => JSON.stringify(item)).join('\n') + '\n'
    this.unread += items.length
    this.bytes += Buffer.byteLength(text)
    this.writing = this.writing.then(() => this.prepare()).then(() => appendFile(this.path, text, { mode: 0o600 }))
    return this.writing
  }

  /** Up to `max` of the oldest unread items (the file is emptied once all are read). */
  async read(max: number): Promise<unknown[]> {
    await this.writing
    if (this.unread === 0) return []
    const handle = await open(this.path, 'r')
    const items: unknown[] = []
    try {
      let block = Buffer.alloc(1 << 20)
      while (items.length < max) {
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
          if (items.length === max) break
          this.offset += Buffer.byteLength(line) + 1
          if (line.trim() !== '') items.push(JSON.parse(line))
        }
      }
    } finally {
      await handle.close()
    }
    this.unread = Math.max(0, this.unread - items.length)
    if (this.unread === 0) await this.empty()
    return items
  }

  /** Delete the file (nothing unread is left). */
  async empty(): Promise<void> {
    await this.writing
    await rm(this.path, { force: true })
    this.offset = 0
    this.unread = 0
    this.bytes = 0
  }

  /** Append the lines of a file taken over from a gone process, then delete it. */
  private async adopt(file: string): Promise<void> {
    const lines = (await readFile(file, 'utf8')).split('\n').filter(line => line.trim() !== '')
    if (lines.length > 0) {
      const text = lines.join('\n') + '\n'
      await appendFile(this.path, text, { mode: 0o600 })
      this.unread += lines.length
      this.bytes += Buffer.byteLength(text)
    }
    await rm(file, { force: true })
  }
}

/** `<pid>-<start ticks>-<boot id, 8 characters>`, or the pid alone where the platform tells no start time. */
function stampTag({ pid, startTicks, bootId }: ProcessStamp): string {
  return startTicks !== undefined && bootId ? `${pid}-${startTicks}-${bootId.slice(0, 8)}` : String(pid)
}

/** The stamp of the process that named a file (`owner`: the match of host, pid, start ticks and boot id). */
function stampOfFile(owner: RegExpExecArray): ProcessStamp {
  const pid = Number(owner[2])
  if (owner[3] === undefined) return { pid }
  const current = ownStamp().bootId
  const bootId = current?.startsWith(owner[4]!) ? current : owner[4]
  return { pid, startTicks: Number(owner[3]), ...(bootId ? { bootId } : {}) }
}
