import type { Logger } from '../logger.ts'
import type { Collection } from '../store/collection.ts'
import { processAlive, type ProcessStamp } from '../store/process-alive.ts'

/**
 * Before a process refuses to start because of another instance's record, it waits to see whether
 * that one still heartbeats (it may be dying): the instance registry's start-up rule.
 */

/** What the wait reads of an instance record (the registry's records have more). */
interface HeartbeatRecord extends ProcessStamp {
  id: string
  host: string
  heartbeatAt: number
  url?: string
}

/**
 * The live instance in the way of `own`'s start, with the refusal to give if it stays: any other
 * instance `refusalFor` refuses (this one may not share the store); a record of this host with
 * this instance's address (its previous run, in cluster mode). Undefined when none is.
 */
export function inTheWay<R extends HeartbeatRecord>(
  own: R,
  live: Iterable<R>,
  refusalFor: (id: string) => string | undefined,
): { record: R; refusal: string } | undefined {
  for (const record of live) {
    if (record.id === own.id) continue
    const refusal = refusalFor(record.id)
    if (refusal) return { record, refusal }
    if (record.host === own.host && record.url !== undefined && record.url === own.url) {
      return {
        record,
        refusal: `Another gateway instance (${record.id}, pid ${record.pid}) of this host is registered with this instance's address (${record.url}) and keeps heartbeating: stop it, or give this one another port or GATEWAY_ADVERTISE_URL`,
      }
    }
  }
  return undefined
}

/**
 * Wait for `other`'s heartbeat to lapse: true once its record is gone (expired, removed, or its
 * process, of this host, gone), false as soon as the record is renewed (it heartbeats: alive),
 * judged by the record changing, never by comparing clocks. Up to a time-to-live and a heartbeat;
 * a record still there unchanged then has lapsed too (it is removed). Logged once.
 */
export async function heartbeatLapsed<R extends HeartbeatRecord>(
  records: Collection<R>,
  other: R,
  host: string,
  settings: { heartbeatMs: number; ttlMs: number },
  logger: Logger,
): Promise<boolean> {
  const waitMs = settings.ttlMs + settings.heartbeatMs
  logger.warn(
    { other: other.id, pid: other.pid, host: other.host, waitMs },
    'another gateway process is registered on this store: waiting for its heartbeat to lapse (it may be dying) before refusing to start',
  )
  const until = Date.now() + waitMs
  const pollMs = Math.max(50, Math.min(500, Math.floor(settings.heartbeatMs / 4)))
  let latest = other
  while (Date.now() < until) {
    await new Promise(resolve => setTimeout(resolve, pollMs))
    const now = await records.load(other.id)
    if (now === undefined) return true
    latest = now
    if (now.host === host && !processAlive(now)) break
    if (now.heartbeatAt !== other.heartbeatAt) return false
  }
  await records.removeIfEqual(other.id, latest)
  logger.info({ other: other.id }, 'its heartbeat lapsed: starting')
  return true
}
