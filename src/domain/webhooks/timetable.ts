/** A pending delivery as the timetable knows it: its outbox key, its device, and when it is due. */
interface ScheduledDelivery {
  key: string
  deviceId: string
  due: number
}

/**
 * The in-memory timetable of pending deliveries, bounded: at most `capacity` entries. When full, the entry due
 * last gives way to an earlier one, and whatever is left out (it stays in storage) lowers the
 * `horizon`: every pending delivery not held here is due at or after it. When the clock reaches the
 * horizon the owner reloads the timetable from storage (`beginReload`, then `add` each record).
 *
 * Entries are kept sorted earliest-first behind a moving head: a new event (due now, the latest so
 * far) is appended, taking the earliest advances the head, and the taken slots are dropped in one
 * move once they are half the array. Only an entry due before others (a retry moved earlier, a
 * reload) costs a binary search plus an array move.
 */
export class DeliveryTimetable {
  /** The entries from `head` on, earliest first (ties: by key); the slots before `head` were taken. */
  private order: ScheduledDelivery[] = []
  private head = 0
  private readonly byKey = new Map<string, ScheduledDelivery>()
  private leftOutFrom = Infinity

  constructor(readonly capacity: number) {}

  /** Entries held. */
  get size(): number {
    return this.order.length - this.head
  }

  /** Every pending delivery not held here is due at or after this time (Infinity: none was left out). */
  get horizon(): number {
    return this.leftOutFrom
  }

  /** Whether the delivery is held. */
  has(key: string): boolean {
    return this.byKey.has(key)
  }

  /** Hold a delivery (replacing its earlier entry), or leave it to storage when it is due too late to fit. */
  add(entry: ScheduledDelivery): void {
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
    const index = this.insertionIndex(item)
    if (index === this.order.length) this.order.push(item)
    else this.order.splice(index, 0, item)
    this.byKey.set(item.key, item)
  }

  /** Drop a delivery's entry; true when there was one. */
  remove(key: string): boolean {
    const item = this.byKey.get(key)
    if (!item) return false
    this.byKey.delete(key)
    // Keys are unique and the order is strict, so the search lands on the entry itself.
    const index = this.insertionIndex(item)
    this.order.splice(this.order[index] === item ? index : this.order.indexOf(item, this.head), 1)
    this.compact()
    return true
  }

  /** The earliest entry, without taking it. */
  peek(): ScheduledDelivery | undefined {
    return this.order[this.head]
  }

  /** Take every entry due at or before `now`, earliest first. */
  takeDue(now: number): ScheduledDelivery[] {
    const due: ScheduledDelivery[] = []
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

  /** Note that some pending delivery, due at `due`, is not held (e.g. a reload failed): the owner reloads then. */
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

  /** Index (at or after the head) at which `item` keeps the order earliest-first (ties: by key, ascending). */
  private insertionIndex(item: ScheduledDelivery): number {
    let low = this.head
    let high = this.order.length
    while (low < high) {
      const mid = (low + high) >>> 1
      const other = this.order[mid]
      const otherFirst = other.due < item.due || (other.due === item.due && other.key < item.key)
      if (otherFirst) low = mid + 1
      else high = mid
    }
    return low
  }
}
