import type { Liveness } from '../instances.ts'

/** A claim on an outbox record: which instance is delivering it, and until when the claim holds. */
export interface Lease {
  /** The claiming instance's id (see Instances). */
  owner: string
  /** Milliseconds since the epoch. */
  until: number
}

/**
 * Whether a lease taken by someone other than `me` still keeps `me` off the record: until it
 * expires, and only while its instance is alive (a gone instance's lease is void at once, so its
 * interrupted attempt passes to another process without waiting for the expiry).
 */
export function leaseHolds(lease: Lease | undefined, me: string, now: number, liveness: Pick<Liveness, 'isAlive'>): boolean {
  return lease !== undefined && lease.owner !== me && lease.until > now && liveness.isAlive(lease.owner)
}
