import type { Context, Middleware, Next } from 'koa'
import { GatewayError, isGatewayError } from '../../errors.ts'
import type { GatewayEvents } from '../../events.ts'
import type { NewDevice, SessionRouting } from '../../domain/cluster/session-routing.ts'
import type { Instances } from '../../domain/instances.ts'
import type { Device } from '../../domain/devices.ts'
import type { OperationServices } from '../../operations/operation.ts'
import { requestState, type RequestState } from '../request-state.ts'
import { HOLDER_HEADER } from '../../client-api.ts'
import { ForwardFailedError, NOT_HOLDER_HEADER, forwardOperation, relayAnswer, type ForwardAnswer } from './send.ts'
import { KnownHolders, type KnownHolder } from './known-holders.ts'

/** What an instance of a cluster needs to hand a request to another one: the cluster secret, its advertised URL (the holder hint of its devices), the registry. */
export interface ClusterRouting {
  secret: string
  advertiseUrl: string
  instances: Instances
  events: GatewayEvents
}

/** What routeToHolder needs: which instance works a device, and in cluster mode how to reach it; `baseUrlOf` the public URL the client called. */
interface HolderRoutingDeps {
  services: OperationServices
  routing: SessionRouting
  cluster?: ClusterRouting
  baseUrlOf(ctx: Context, state: RequestState): string
}

/**
 * Middleware: an operation that needs its device's session (its `device.session`) runs on the
 * instance holding it. Held here (or taken here: see SessionRouting), the request goes on, with the
 * open session for a `connected` need and the device found or made for a `link`; held by another
 * instance, it is forwarded there and answered with exactly what that one answered (never twice: a
 * request forwarded here is not sent on, and a holder that cannot be reached or breaks off is 503
 * `holder-unavailable` with Retry-After, never resent). Which instance holds a device another one
 * holds is remembered (KnownHolders): no store read per forward while nothing changed.
 */
export function routeToHolder(path: string, deps: HolderRoutingDeps): Middleware {
  const { routing, cluster } = deps
  const holders = cluster && knownHoldersOf(cluster)
  /** The request is worked here: tell the caller (cluster mode) that this instance holds its device. */
  const held = cluster ? (ctx: Context) => ctx.set(HOLDER_HEADER, cluster.advertiseUrl) : () => {}
  /** Forward to `instanceId` and relay its answer; remembered as the device's holder when it answered as one. */
  const forward = async (ctx: Context, state: RequestState, instanceId: string, deviceId?: string) => {
    const url = (await cluster?.instances.recordOf(instanceId))?.url
    if (!cluster || !url || state.forwardedFrom) {
      throw new GatewayError('holder-unavailable', { retryAfterSeconds: 5, cause: new Error(`the device is held by instance ${instanceId}`) })
    }
    const answer = await send(ctx, state, { id: instanceId, url })
    if (deviceId && answer.status !== 503 && !answer.notHolder) holders!.remember(deviceId, { id: instanceId, url })
    relayAnswer(ctx, answer)
  }
  const send = (ctx: Context, state: RequestState, to: KnownHolder): Promise<ForwardAnswer> =>
    forwardToHolder(ctx, cluster!, to, { path, state, baseUrl: deps.baseUrlOf(ctx, state) })
  /**
   * Forward to the remembered holder: undefined once answered; else (unreachable, so nothing was
   * sent, or it does not hold the device and ran nothing) the entry is forgotten, and the caller asks
   * the store, with what to answer when the store still names the same instance.
   */
  const viaKnown = async (ctx: Context, state: RequestState, deviceId: string, known: KnownHolder): Promise<(() => void) | undefined> => {
    let answer: ForwardAnswer
    try {
      answer = await send(ctx, state, known)
    } catch (err) {
      holders!.forget(deviceId)
      if (err instanceof ForwardFailedError && err.reason === 'unreachable') return () => Promise.reject(err)
      throw err
    }
    if (answer.status === 503 || answer.notHolder) holders!.forget(deviceId)
    if (answer.notHolder) return () => relayAnswer(ctx, answer)
    relayAnswer(ctx, answer)
    return undefined
  }
  /** The device's holder, then the open session when needed. */
  const onHolder = async (ctx: Context, next: Next, state: RequestState, device: Device) => {
    if (!routing.holdsHere(device)) {
      const forwarded = state.forwardedFrom !== undefined
      const known = forwarded ? undefined : holders?.get(device.id)
      const stale = known && (await viaKnown(ctx, state, device.id, known))
      if (known && !stale) return
      const holder = await routing.holderOf(device, forwarded).catch(err => {
        // Forwarded here for a device this instance does not hold: refused before anything ran.
        if (forwarded && isGatewayError(err, 'holder-unavailable')) ctx.set(NOT_HOLDER_HEADER, '1')
        throw err
      })
      if (holder !== undefined) return stale && holder === known!.id ? stale() : forward(ctx, state, holder, device.id)
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
    const wanted: NewDevice = { ...need.create?.(input, deps.services), name: input[need.ref] as string | undefined }
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

/** One memory of holders per cluster, shared by every operation path. */
const knownHolders = new WeakMap<ClusterRouting, KnownHolders>()

function knownHoldersOf(cluster: ClusterRouting): KnownHolders {
  let holders = knownHolders.get(cluster)
  if (!holders) knownHolders.set(cluster, (holders = new KnownHolders(cluster.instances)))
  return holders
}

/** POST the request, signed, to the holder `to`; resolves with its answer (a `forward` event either way). */
async function forwardToHolder(ctx: Context, cluster: ClusterRouting, to: KnownHolder, request: { path: string; state: RequestState; baseUrl: string }) {
  const { state } = request
  const operation = state.operation?.name
  try {
    const answer = await forwardOperation({
      baseUrl: to.url,
      path: request.path,
      fields: state.body!.fields,
      uploads: state.body!.uploads,
      secret: cluster.secret,
      from: cluster.instances.id,
      to: to.id,
      clientIp: ctx.ip,
      clientBaseUrl: request.baseUrl,
    })
    cluster.events.emit('forward', { operation, to: to.id, ok: true })
    return answer
  } catch (err) {
    cluster.events.emit('forward', { operation, to: to.id, ok: false })
    throw err
  }
}
