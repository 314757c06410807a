import { TransportError } from 'zapgate'
import type { Fault } from './types.ts'

/**
 * Injected failures of device calls, keyed by device id or phone. A `hang` holds the call until the
 * fault is cleared (it then goes ahead) or the device's session closes (it then fails).
 */
export class FaultGate {
  private readonly faults = new Map<string, Fault>()
  private readonly waiters = new Set<{ keys: string[]; wake: () => void }>()

  /** Set (or, with null, clear) the fault of a device id or phone; wakes calls hanging on it. */
  set(target: string, fault: Fault | null): void {
    if (fault === null) this.faults.delete(target)
    else if (this.faults.size < 10_000 || this.faults.has(target)) this.faults.set(target, fault)
    else throw new TransportError('invalid', 'too many faults set')
    this.release(target)
  }

  /** Whether any fault is set at all. */
  any(): boolean {
    return this.faults.size > 0
  }

  /** Resolve when no fault applies to `keys`; throw the fault's error otherwise. */
  async check(keys: string[], stillOpen: () => boolean): Promise<void> {
    for (;;) {
      const fault = keys.map(key => this.faults.get(key)).find(f => f !== undefined)
      if (fault === undefined) return
      if (fault === 'fail') throw new TransportError('failed', 'simulated network failure')
      if (fault === 'rate-limit') throw new TransportError('rate-limited', 'simulated rate limit')
      if (fault === 'timeout') throw new TransportError('timeout', 'simulated network timeout')
      await new Promise<void>(resolve => {
        const waiter = { keys, wake: () => (this.waiters.delete(waiter), resolve()) }
        this.waiters.add(waiter)
      })
      if (!stillOpen()) throw new TransportError('not-connected', 'the session closed while the call was hanging')
    }
  }

  /** Wake every call hanging on `key` (it re-checks its fault and its session). */
  release(key: string): void {
    for (const waiter of [...this.waiters]) if (waiter.keys.includes(key)) waiter.wake()
  }

  /** Number of calls currently hanging. */
  get hanging(): number {
    return this.waiters.size
  }
}
