import type Router from '@koa/router'
import type { Context } from 'koa'
import { array, boolean, integer, number, object, optional, string } from 'superstruct'
import type { DeviceLeases } from '../domain/cluster/device-leases.ts'
import type { Instances } from '../domain/instances.ts'
import type { Logger } from '../logger.ts'
import type { Storage } from '../ports/storage.ts'
import type { Transport } from '../ports/transport.ts'

/** One check of the health answer: reachable or not, and how long the probe took. */
const check = object({ ok: boolean(), ms: number() })

/** The body of `GET /health` (documented in the OpenAPI document from this struct). */
export const healthAnswer = object({
  status: integer(),
  message: string(),
  checks: object({ storage: check, transport: check }),
  /** This gateway process, the device sessions it holds, and the live instances on the store (with their loads, as their heartbeats tell). */
  instance: object({ id: string(), devices: array(string()), live: array(object({ id: string(), devices: integer(), url: optional(string()) })) }),
})

/** What /health reads. */
interface HealthDeps {
  storage: Storage
  transport: Transport
  logger: Logger
  instances: Instances
  leases: DeviceLeases
}

/**
 * `GET /health`: whether the store (`Storage.ping`) and the transport (`Transport.ping`, or a status
 * read when it has none) answer within `timeoutMs`. 200 when both do, else 503, whatever the
 * `httpStatus` option (load balancers read the HTTP code). Failures are logged, never shown.
 */
export function healthRoute(router: Router, { storage, transport, logger, instances, leases }: HealthDeps, timeoutMs: number): void {
  router.get('/health', async (ctx: Context) => {
    const [storageCheck, transportCheck] = await Promise.all([
      probe('storage', () => storage.ping?.() ?? Promise.resolve()),
      probe('transport', () => (transport.ping ? transport.ping() : transport.status(PROBE_DEVICE).then(() => undefined))),
    ])
    const healthy = storageCheck.ok && transportCheck.ok
    ctx.set('Cache-Control', 'no-store')
    ctx.status = healthy ? 200 : 503
    ctx.body = {
      status: ctx.status,
      message: healthy ? 'Gateway disponível.' : 'Gateway indisponível.',
      checks: { storage: storageCheck, transport: transportCheck },
      instance: {
        id: instances.id,
        devices: leases.devices,
        live: instances.view.liveRecords.map(record => ({
          id: record.id,
          devices: record.id === instances.id ? leases.count : (record.devices ?? 0),
          ...(record.url ? { url: record.url } : {}),
        })),
      },
    }
  })

  async function probe(name: string, run: () => Promise<unknown>): Promise<{ ok: boolean; ms: number }> {
    const started = performance.now()
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
    })
    try {
      await Promise.race([run(), timeout])
      return { ok: true, ms: elapsed(started) }
    } catch (err) {
      logger.warn({ err, check: name }, 'health check failed')
      return { ok: false, ms: elapsed(started) }
    } finally {
      clearTimeout(timer)
    }
  }
}

// --- Internal helpers ---

/** A device id no device has: reading its status exercises the transport without touching a session. */
const PROBE_DEVICE = '__zapgate_health_probe__'

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10
}
