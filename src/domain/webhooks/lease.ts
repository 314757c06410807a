import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'

/** A claim on an outbox record: who is delivering it, and until when the claim holds. */
export interface Lease {
  /** `<host>/<pid>/<run>` of the claiming process. */
  owner: string
  /** Milliseconds since the epoch. */
  until: number
}

/** This process's lease owner name: host, pid and a per-run nonce. */
export function leaseOwner(): string {
  return `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`
}

/**
 * Whether a lease taken by someone other than `me` still keeps `me` off the record. A lease holds
 * until it expires, except that one taken by an earlier run on this host whose process is gone (a
 * crash or SIGKILL: same host, and that pid is dead or is this very process) is stale at once, so a
 * restarted gateway resumes its own interrupted deliveries without waiting for the lease to run out.
 */
export function leaseHolds(lease: Lease | undefined, me: string, now: number): boolean {
  if (!lease || lease.owner === me || lease.until <= now) return false
  const [host, pidText] = lease.owner.split('/')
  const [myHost] = me.split('/')
  const pid = Number(pidText)
  if (host !== myHost || !Number.isInteger(pid) || pid <= 0) return true
  return pid !== process.pid && processAlive(pid)
}

// --- Internal helpers ---

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}
