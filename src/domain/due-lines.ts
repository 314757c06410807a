import { earlier, type Entry } from './timetable.ts'

/** The due work of each lane waiting for a free slot, each line in the timetable's order (due time, then order, then key): work that joins a line later (a lane read, a run given back) takes its place by `earlier`, not the end. */
export class DueLines {
  private readonly lines = new Map<string, Entry[]>()
  private readonly keys = new Set<string>()

  /** Whether `key` waits in a line. */
  has(key: string): boolean {
    return this.keys.has(key)
  }

  /** How many keys wait, in all lines. */
  get size(): number {
    return this.keys.size
  }

  /** A lane's line, first to run first. */
  get(lane: string): readonly Entry[] | undefined {
    return this.lines.get(lane)
  }

  /** How many keys wait in a lane's line. */
  length(lane: string): number {
    return this.lines.get(lane)?.length ?? 0
  }

  /** The lanes with work waiting. */
  lanes(): string[] {
    return [...this.lines.keys()]
  }

  /** Put an entry in its place in its lane's line (a binary search: keys are unique, the order strict). */
  add(entry: Entry): void {
    const line = this.lines.get(entry.lane) ?? []
    let [low, high] = [0, line.length]
    while (low < high) {
      const mid = (low + high) >>> 1
      if (earlier(line[mid], entry)) low = mid + 1
      else high = mid
    }
    line.splice(low, 0, entry)
    this.lines.set(entry.lane, line)
    this.keys.add(entry.key)
  }

  /** Take the first entry of a lane's line. */
  take(lane: string): Entry | undefined {
    const line = this.lines.get(lane)
    const entry = line?.shift()
    if (line?.length === 0) this.lines.delete(lane)
    if (entry) this.keys.delete(entry.key)
    return entry
  }

  /** Drop a lane's line. */
  forget(lane: string): void {
    for (const { key } of this.lines.get(lane) ?? []) this.keys.delete(key)
    this.lines.delete(lane)
  }
}
