import { GatewayError } from '../../errors.ts'

/**
 * The process-wide budget of media bytes in flight: each request holds its share (a MediaHold) until
 * it is answered; a request that would take the total past it is refused `media-budget-exceeded`
 * (429), unless it is alone.
 */
export class MediaBudget {
  private used = 0

  constructor(private readonly limitBytes: number) {}

  /** Bytes held now by all requests. */
  get inFlight(): number {
    return this.used
  }

  /** A hold of `bytes` (0: none yet); throws media-budget-exceeded when the budget cannot take them. */
  hold(bytes = 0): MediaHold {
    const hold = new MediaHold(this)
    hold.add(bytes)
    return hold
  }

  /** Move the total by `delta` bytes; a growth past the budget throws (and is not taken). */
  change(delta: number, alone: boolean): void {
    if (delta > 0 && this.used + delta > this.limitBytes && !alone) throw new GatewayError('media-budget-exceeded', { retryAfterSeconds: 5 })
    this.used += delta
  }
}

/** The media bytes one request holds of the budget, given back when it is answered. */
export class MediaHold {
  private bytes = 0

  constructor(private readonly budget: MediaBudget) {}

  /** Hold `bytes` more (fewer when negative); throws media-budget-exceeded past the budget (the hold then keeps what it had). */
  add(bytes: number): void {
    const next = Math.max(0, this.bytes + bytes)
    this.budget.change(next - this.bytes, this.budget.inFlight === this.bytes)
    this.bytes = next
  }

  /** Give every byte back (the request is answered). */
  release(): void {
    this.add(-this.bytes)
  }
}
