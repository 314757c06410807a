/** A pending run; among runs due at the same time the lower `order` goes first (then the key): e.g. when a message was scheduled. */
export interface Entry {
  key: string
  lane: string
  due: number
  order?: number
}

/** Pending runs in memory, earliest first, bounded to `capacity`: what is left out stays in storage and lowers the `horizon` to read it again from. */
export class Timetable {
  private order: Entry[] = []
  private readonly byKey = new Map<string, Entry>()
  private leftOutFrom = Infinity

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.order.length
  }

  /** Every pending run not held here is due at or after this time (Infinity: none was left out). */
  get horizon(): number {
    return this.leftOutFrom
  }

  /** Hold an entry (replacing the key's earlier one), or leave it to storage when it comes too late (by `earlier`: due time, then order) to fit. */
  add(entry: Entry): void {
    this.remove(entry.key)
    if (this.order.length >= this.capacity) {
      const latest = this.order[this.order.length - 1]
      // By the full order, not the due time alone: else, among entries due at once, whichever the store listed last was left out, to run after ones scheduled later.
      if (latest === undefined || !earlier(entry, latest)) return this.leaveOut(entry.due)
      this.order.pop()
      this.byKey.delete(latest.key)
      this.leaveOut(latest.due)
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
    return true
  }

  peek(): Entry | undefined {
    return this.order[0]
  }

  /** Take every entry due at or before `now`, earliest first. */
  takeDue(now: number): Entry[] {
    let count = 0
    while (count < this.order.length && this.order[count].due <= now) this.byKey.delete(this.order[count++].key)
    return this.order.splice(0, count)
  }

  /** Start a reload from storage: nothing counts as left out until `add` leaves something out again. */
  beginReload(): void {
    this.leftOutFrom = Infinity
  }

  /** Note that some pending run, due at `due`, is not held: the owner reloads then. */
  leaveOut(due: number): void {
    this.leftOutFrom = Math.min(this.leftOutFrom, due)
  }

  /** Where `item` stands (or would) in the order: a binary search (keys are unique, the order strict). */
  private indexOf(item: Entry): number {
    let [low, high] = [0, this.order.length]
    while (low < high) {
      const mid = (low + high) >>> 1
      if (earlier(this.order[mid], item)) low = mid + 1
      else high = mid
    }
    return low
  }
}

/** Whether `a` runs before `b`: due first, then `order`, then key (unique, so the order is strict). */
export function earlier(a: Entry, b: Entry): boolean {
  if (a.due !== b.due) return a.due < b.due
  if ((a.order ?? 0) !== (b.order ?? 0)) return (a.order ?? 0) < (b.order ?? 0)
  return a.key < b.key
}
