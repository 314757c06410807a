import { uniqueTag } from '../security/keys.ts'
import { performance } from 'node:perf_hooks'
import { putBounded } from '../store/bounded-map.ts'
import type { Liveness } from './instances.ts'

/** A claim on shared work (a webhook event, a scheduled message, a device's session): its holder, how long it lasts, its fencing epoch. */
export interface Claim {
  /** The holding instance; null when handed back; absent only in claims written before instances existed. */
  owner?: string | null
  /** With `owner` null: the instance that handed it back (a device lease taken next is taken over from it). */
  handedBackBy?: string
  /** When it ends, by the holder's clock: only the holder reads it against its own clock. */
  until?: number
  /** Its length: another process gives it this long from when it first saw it, by its own clock. */
  ms?: number
  /** Raised by every takeover: a holder whose epoch is not the stored one has lost the claim. */
  epoch?: number
  /** Tells one take from another. */
  token?: string
}

/** How `claimedUntil` judges: `ownYields`, the reader's own claim keeps nobody off; `epoch`, whether the reader itself still holds it at that epoch. */
type ClaimCheck = { ownYields?: boolean; epoch?: number; now?: number }

/** Until when (by this clock) `claim` keeps `liveness.id` off its work, or undefined; with `epoch` only the reader's own at that epoch (docs/scaling.md, "Claims and clocks"). */
export function claimedUntil(claim: Claim | undefined, liveness: Liveness, check: ClaimCheck = {}): number | undefined {
  if (!claim || claim.owner === null) return undefined
  const mine = claim.owner === liveness.id
  if (check.epoch !== undefined) return mine && claim.epoch === check.epoch ? Infinity : undefined
  if ((mine && (check.ownYields || unanswered.has(claim.token))) || (claim.owner !== undefined && !liveness.isAlive(claim.owner))) return undefined
  if (claim.until === undefined) return claim.owner === undefined ? undefined : Infinity
  const now = check.now ?? Date.now()
  const end = mine || claim.ms === undefined ? claim.until : now + claim.ms - sinceFirstSeen(claim)
  return end > now ? end : undefined
}

/**
 * `claimedUntil`, for a decision to take over the claim's work: a claim of another instance that the last registry read took for gone
 * is void only once a read of that instance's record, now, still finds it gone (`Liveness.confirmGone`): the registry read may be a
 * heartbeat old, and a process back from a pause registers again before anything it claims counts (its fence), so its claims made
 * since hold. One store read, only when the claim's owner is judged gone.
 */
export async function claimedUntilConfirmed(claim: Claim | undefined, liveness: Liveness, check: ClaimCheck = {}): Promise<number | undefined> {
  const until = claimedUntil(claim, liveness, check)
  const owner = claim?.owner
  if (until !== undefined || !owner || owner === liveness.id || liveness.isAlive(owner) || (await ownerGone(owner, liveness))) return until
  return claimedUntil(claim, { id: liveness.id, isAlive: id => id === owner || liveness.isAlive(id), onDeparture: () => {} }, check)
}

/** Whether `owner` (named by a record this process would take over) is gone: by the last registry read, and by its record read now when that read took it for gone. */
export async function ownerGone(owner: string | undefined, liveness: Liveness): Promise<boolean> {
  return !liveness.isAlive(owner) && (owner === undefined || !liveness.confirmGone || (await liveness.confirmGone(owner)))
}

/** A new claim of `owner` for `ms` from `now`. */
export function newClaim(owner: string, ms: number, now = Date.now()): Claim {
  return { owner, until: now + ms, ms, token: uniqueTag() } // random bytes per claim were 2% of a webhook's CPU
}

/** Tokens of this process's claims whose write got no answer (it may have landed all the same): void to this process, which takes the work again at once. */
const unanswered = new Map<unknown, true>()

/** `write` of this process's `claim`: should it reject, the claim (landed or not) is void to this process from then on. */
export function writingClaim<T>(claim: Claim, write: Promise<T>): Promise<T> {
  return write.catch(err => {
    putBounded(unanswered, claim.token, true, 10_000)
    throw err
  })
}

/** When this process first and last saw each claim of another instance and each agent reply window of flows.ts (monotonic ms): forgotten only once unseen for its length (swept when the map doubles), never while held. */
const firstSeen = new Map<string, { at: number; last: number; ms: number }>()
let sweepAt = 10_000

export function sinceFirstSeen(claim: Claim): number {
  const id = `${claim.owner}\n${claim.token}\n${claim.until}`
  const now = performance.now()
  const seen = firstSeen.get(id)
  if (seen) return (seen.last = now) - seen.at
  if (firstSeen.set(id, { at: now, last: now, ms: claim.ms! }).size <= sweepAt) return 0
  for (const [key, { last, ms }] of firstSeen) if (now - last >= ms) firstSeen.delete(key)
  sweepAt = Math.max(10_000, 2 * firstSeen.size)
  return 0
}
