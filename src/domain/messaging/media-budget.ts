import { GatewayError } from '../../errors.ts'

/** The media bytes one request holds of the budget, given back when it is answered. */
export interface MediaHold {
  /** Hold `bytes` more (fewer when negative); throws media-budget-exceeded past the budget (the hold then keeps what it had). */
  add(bytes: number): void
  /** Give every byte back (the request is answered). */
  release(): void
  /** The bytes it holds now. */
  held(): number
}

/** The process-wide budget of media bytes in flight: each request holds its share (a MediaHold) until it is answered; a request that would take the total past it is refused `media-budget-exceeded` (429), unless it is alone. */
export class MediaBudget {
  private used = 0

  constructor(private readonly limitBytes: number) {}

  /** A hold of `bytes` (0: none yet); throws media-budget-exceeded when the budget cannot take them. */
  hold(bytes = 0): MediaHold {
    let held = 0
    const add = (delta: number) => {
      const next = Math.max(0, held + delta)
      if (next > held && this.used + next - held > this.limitBytes && this.used !== held)
        throw new GatewayError('media-budget-exceeded', { retryAfterSeconds: 5 })
      this.used += next - held
      held = next
    }
    add(bytes)
    return { add, release: () => add(-held), held: () => held }
  }

  /** The bytes every request holds now (what a test waits on, not a limit to read against: it changes at the next await). */
  inUse(): number {
    return this.used
  }
}
