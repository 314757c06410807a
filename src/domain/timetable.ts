/** A pending run as the timetable holds it. */
interface Entry {
  key: string
  lane: string
  due: number
}

/**
 * The in-memory timetable, bounded to `capacity` entries: when full, the entry due last gives way to
 * an earlier one, and what is left out (it stays in storage) lowers the `horizon`. Entries are kept
 * sorted earliest-first (ties: by key) behind a moving head, so taking the earliest is cheap.
 */
export class Timetable {
  private order: Entry[] = []
  private head = 0
  private readonly byKey = new Map<string, Entry>()
  private leftOutFrom = Infinity

  constructor(readonly capacity: number) {}

  /** Entries held. */
  get size(): number {
    return this.order.length - this.head
  }

  /** Every pending run not held here is due at or after this time (Infinity: none was left out). */
  get horizon(): number {
    return this.leftOutFrom
  }

  /** Whether the key is held. */
  has(key: string): boolean {
    return this.byKey.has(key)
  }

  /** Hold an entry (replacing the key's earlier one), or leave it to storage when it is due too late to fit. */
  add(entry: Entry): void {
    this.remove(entry.key)
    if (this.size >= this.capacity) {
      const latest = this.order[this.order.length - 1]
      if (latest === undefined || !(entry.due < latest.due)) {
        this.leftOutFrom = Math.min(this.leftOutFrom, entry.due)
        return
      }
      this.order.pop()
      this.byKey.delete(latest.key)
      this.leftOutFrom = Math.min(this.leftOutFrom, latest.due)
    }
    const item = { ...entry }
    this.order.splice(this.indexOf(item), 0, item)
    this.byKey.set(item.key, item)
  }

  /** Drop a key's entry; true when there was one. */
  remove(key: string): boolean {
    const item = this.byKey.get(key)
    if (!item) return false
    this.byKey.delete(key)
    this.order.splice(this.indexOf(item), 1)
    this.compact()
    return true
  }

  /** The earliest entry, without taking it. */
  peek(): Entry | undefined {
    return this.order[this.head]
  }

  /** Take every entry due at or before `now`, earliest first. */
  takeDue(now: number): Entry[] {
    const due: Entry[] = []
    while (this.head < this.order.length && this.order[this.head].due <= now) {
      const item = this.order[this.head++]
      this.byKey.delete(item.key)
      due.push(item)
    }
    this.compact()
    return due
  }

  /** Start a reload from storage: nothing counts as left out until `add` leaves something out again. */
  beginReload(): void {
    this.leftOutFrom = Infinity
  }

  /** Note that some pending run, due at `due`, is not held (a reload failed): the owner reloads then. */
  leaveOut(due: number): void {
    this.leftOutFrom = Math.min(this.leftOutFrom, due)
  }

  // --- Internal helpers ---

  /** Drop the taken slots: at once when nothing is left, else when they are half the array. */
  private compact(): void {
    if (this.head === 0) return
    if (this.head === this.order.length) {
      this.order = []
      this.head = 0
    } else if (this.head * 2 >= this.order.length) {
      this.order.splice(0, this.head)
      this.head = 0
    }
  }

  /** Where `item` stands (or would) in the order, from the head (keys are unique and the order strict). */
  private indexOf(item: Entry): number {
    let low = this.head
    let high = this.order.length
    while (low < high) {
      const mid = (low + high) >>> 1
      const other = this.order[mid]
      if (other.due < item.due || (other.due === item.due && other.key < item.key)) low = mid + 1
      else high = mid
    }
    return low
  }
}
