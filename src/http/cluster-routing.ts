import type { Context } from 'koa'
import { GatewayError } from '../errors.ts'
import type { GatewayEvents } from '../events.ts'
import type { HeldElsewhere } from '../domain/cluster/device-leases.ts'
import type { Instances } from '../domain/instances.ts'
import type { ParsedBody } from './body.ts'
import { forwardedRequestReader, forwardOperation, relayAnswer, type ForwardedFrom } from './forwarding.ts'

/** What an instance of a cluster needs to hand a request to another one. */
export interface ClusterRouting {
  /** The cluster secret (signs and checks forwarded requests). */
  secret: string
  instances: Instances
  events: GatewayEvents
}

/**
 * Reading a request forwarded by another instance: verified against the cluster secret (403 when
 * wrong, stale or replayed) and marked, or left alone when it was not forwarded. Undefined outside
 * cluster mode (a forwarded-looking request is then an ordinary one, with no trust given).
 */
export function forwardedReader(cluster: ClusterRouting | undefined, bodyLimitBytes: number): ((ctx: Context) => Promise<unknown>) | undefined {
  return cluster ? forwardedRequestReader(cluster.secret, bodyLimitBytes, cluster.instances.id) : undefined
}

/** Who forwarded the request, when it was forwarded (and verified). */
export function forwardedFrom(ctx: Context): ForwardedFrom | undefined {
  return ctx.state.gatewayForwardedFrom as ForwardedFrom | undefined
}

/**
 * Hand the request to the instance holding its device and answer the client with exactly what that
 * one answered. Never twice: a request that was itself forwarded here, or a holder with no known
 * address, is 503 `holder-unavailable` (Retry-After) for the client to try again; so is a holder
 * that cannot be reached or breaks off (the request is never resent: it may have been done).
 */
export async function forwardToHolder(ctx: Context, cluster: ClusterRouting | undefined, held: HeldElsewhere, request: { path: string; body: ParsedBody; baseUrl: string; operation?: string }): Promise<void> {
  const url = (await cluster?.instances.recordOf(held.instanceId))?.url
  if (!cluster || !url || forwardedFrom(ctx)) throw new GatewayError('holder-unavailable', { retryAfterSeconds: 5, cause: held })
  try {
    const answer = await forwardOperation({
      baseUrl: url,
      path: request.path,
      fields: request.body.fields,
      uploads: request.body.uploads,
      secret: cluster.secret,
      from: cluster.instances.id,
      to: held.instanceId,
      clientIp: ctx.ip,
      clientBaseUrl: request.baseUrl,
    })
    cluster.events.emit('forward', { operation: request.operation, to: held.instanceId, ok: true })
    relayAnswer(ctx, answer)
  } catch (err) {
    cluster.events.emit('forward', { operation: request.operation, to: held.instanceId, ok: false })
    throw err
  }
}
