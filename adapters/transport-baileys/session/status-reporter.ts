import type { SessionState, SessionStatus, TransportEvent } from 'zapgate'

/** Facts of a session status other than its state. */
interface StatusPatch {
  phone?: string
  lid?: string
  reason?: string
  /** The network refused the account (a `stop` close): kept only on the status it is given with. */
  refused?: boolean
}

/**
 * A device session's status and the ordered reporting of its events: every change of state, phone,
 * LID or reason goes out as one `status` event (unchanged statuses are not repeated), and events leave
 * one at a time in the order they happened, each recorded by the gateway before the next.
 */
export class StatusReporter {
  /** The current state. */
  state: SessionState = 'closed'
  /** Linked phone (digits), once known. */
  phone?: string
  /** The account's LID, once known. */
  lid?: string
  private reason?: string
  private refused?: boolean
  private lastSent?: string
  private waiters: (() => void)[] = []
  private queue: Promise<void> = Promise.resolve()

  constructor(
    private readonly deviceId: string,
    private readonly sink: (event: TransportEvent) => Promise<void>,
  ) {}

  /** The status as the gateway reports it. */
  snapshot(): SessionStatus {
    const status: SessionStatus = { state: this.state, connected: this.state === 'open' }
    if (this.phone) status.phone = this.phone
    if (this.lid) status.lid = this.lid
    if (this.reason) status.reason = this.reason
    if (this.refused) status.refused = true
    return status
  }

  /** Change the state (and the facts named in `patch`); reports the new status when it differs. */
  async set(state: SessionState, patch: StatusPatch = {}): Promise<void> {
    this.state = state
    if ('phone' in patch) this.phone = patch.phone
    if ('lid' in patch) this.lid = patch.lid
    if ('reason' in patch) this.reason = patch.reason
    this.refused = patch.refused
    for (const wake of [...this.waiters]) wake()
    const status = this.snapshot()
    const text = JSON.stringify(status)
    if (text === this.lastSent) return
    this.lastSent = text
    await this.emit({ type: 'status', deviceId: this.deviceId, status })
  }

  /** Report an event after those already queued; resolves once the gateway recorded it. */
  emit(event: TransportEvent): Promise<void> {
    const sent = this.queue.then(() => this.sink(event))
    this.queue = sent.catch(() => undefined)
    return sent
  }

  /** Wait up to `ms` (or till `signal` aborts) while the state is `connecting` and `still()` holds; resolves whether it still is. */
  async whileConnecting(ms: number, still: () => boolean, signal?: AbortSignal): Promise<boolean> {
    const deadline = Date.now() + ms
    while (this.state === 'connecting' && still() && !signal?.aborted && Date.now() < deadline) await this.nextChange(deadline - Date.now(), signal)
    return this.state === 'connecting' && still()
  }

  /** Resolve at the next status change, or after `ms`, or once `signal` aborts. */
  nextChange(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise(resolve => {
      const done = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', done)
        this.waiters = this.waiters.filter(w => w !== done)
        resolve()
      }
      const timer = setTimeout(done, ms)
      signal?.addEventListener('abort', done)
      this.waiters.push(done)
    })
  }
}
