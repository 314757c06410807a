import type { Context, Middleware, Next } from 'koa'
import { GatewayError } from '../../errors.ts'
import type { GatewayEvents } from '../../events.ts'
import type { NewDevice, SessionRouting } from '../../domain/cluster/session-routing.ts'
import type { Instances } from '../../domain/instances.ts'
import type { Device } from '../../domain/devices.ts'
import type { OperationServices } from '../../operations/operation.ts'
import { requestState, type RequestState } from '../request-state.ts'
import { HOLDER_HEADER } from '../../client-api.ts'
import { forwardOperation, relayAnswer } from './send.ts'

/** What an instance of a cluster needs to hand a request to another one. */
export interface ClusterRouting {
  /** The cluster secret (signs and checks forwarded requests). */
  secret: string
  /** This instance's advertised URL (the holder hint of the devices it holds). */
  advertiseUrl: string
  instances: Instances
  events: GatewayEvents
}

/** What routeToHolder needs. */
interface HolderRoutingDeps {
  services: OperationServices
  /** Which instance works a request for a device. */
  routing: SessionRouting
  /** Cluster mode: how a request reaches another instance. */
  cluster?: ClusterRouting
  /** The public URL of the request (links the holder makes point there). */
  baseUrlOf(ctx: Context, state: RequestState): string
}

/**
 * Middleware: an operation that needs its device's session (its `device.session`) runs on the
 * instance holding it. Held here (or taken here: see SessionRouting), the request goes on, with the
 * open session for a `connected` need and the device found or made for a `link`; held by another
 * instance, it is forwarded there and answered with exactly what that one answered.
 */
export function routeToHolder(path: string, deps: HolderRoutingDeps): Middleware {
  const { routing, cluster } = deps
  /** The request is worked here: tell the caller (cluster mode) that this instance holds its device. */
  const held = cluster ? (ctx: Context) => ctx.set(HOLDER_HEADER, cluster.advertiseUrl) : () => {}
  /** Hand the request to `instanceId` (see forwardToHolder). */
  const forward = (ctx: Context, state: RequestState, instanceId: string) =>
    forwardToHolder(ctx, cluster, instanceId, { path, state, baseUrl: deps.baseUrlOf(ctx, state) })
  /** The device's holder, then the open session when needed. */
  const onHolder = async (ctx: Context, next: Next, state: RequestState, device: Device) => {
    if (!routing.holdsHere(device)) {
      const holder = await routing.holderOf(device, state.forwardedFrom !== undefined)
      if (holder !== undefined) return forward(ctx, state, holder)
    }
    if (state.session !== 'connected') {
      held(ctx)
      return next()
    }
    state.status = await routing.connected(device)
    held(ctx)
    return next().catch(err => {
      throw routing.unlessLetGo(device, err)
    })
  }
  /** A link: the device is found or made on the instance that will hold it. */
  const onLinker = async (ctx: Context, next: Next, state: RequestState) => {
    const need = state.operation!.device!
    const input = state.input as Record<string, unknown>
    const name = input[need.ref] as string | undefined
    const wanted: NewDevice = { ...need.create?.(input, deps.services), name }
    const linked = await routing.link(state.account!, wanted, state.forwardedFrom !== undefined)
    if (typeof linked === 'string') return forward(ctx, state, linked)
    state.device = linked.device
    state.ensured = { created: linked.created, appkey: linked.appkey }
    held(ctx)
    return next()
  }
  return function gatewayHolder(ctx: Context, next: Next) {
    const state = requestState(ctx)
    const { session, device } = state
    if (session === undefined) return next()
    if (session === 'link') return onLinker(ctx, next, state)
    // The common case: the device's session is here and nothing more is needed.
    if (session === 'device' && routing.holdsHere(device!)) return (held(ctx), next())
    return onHolder(ctx, next, state, device!)
  }
}

/**
 * Hand the request to the instance holding its device and answer the client with exactly what that
 * one answered. Never twice: a request that was itself forwarded here, or a holder with no known
 * address, is 503 `holder-unavailable` (Retry-After) for the client to try again; so is a holder
 * that cannot be reached or breaks off (the request is never resent: it may have been done).
 */
async function forwardToHolder(
  ctx: Context,
  cluster: ClusterRouting | undefined,
  instanceId: string,
  request: { path: string; state: RequestState; baseUrl: string },
): Promise<void> {
  const { state } = request
  const url = (await cluster?.instances.recordOf(instanceId))?.url
  if (!cluster || !url || state.forwardedFrom) {
    throw new GatewayError('holder-unavailable', { retryAfterSeconds: 5, cause: new Error(`the device is held by instance ${instanceId}`) })
  }
  const operation = state.operation?.name
  try {
    const answer = await forwardOperation({
      baseUrl: url,
      path: request.path,
      fields: state.body!.fields,
      uploads: state.body!.uploads,
      secret: cluster.secret,
      from: cluster.instances.id,
      to: instanceId,
      clientIp: ctx.ip,
      clientBaseUrl: request.baseUrl,
    })
    cluster.events.emit('forward', { operation, to: instanceId, ok: true })
    relayAnswer(ctx, answer)
  } catch (err) {
    cluster.events.emit('forward', { operation, to: instanceId, ok: false })
    throw err
  }
}
