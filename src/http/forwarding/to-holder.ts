import type { Context, Middleware, Next } from 'koa'
import { isGatewayError } from '../../errors.ts'
import type { GatewayEvents } from '../../events.ts'
import { moving, type NewDevice, type SessionRouting } from '../../domain/cluster/session-routing.ts'
import type { Instances } from '../../domain/instances.ts'
import type { Device } from '../../domain/devices.ts'
import type { OperationServices } from '../../operations/operation.ts'
import { requestState, type RequestState } from '../request-state.ts'
import { HOLDER_HEADER } from '../../client-api.ts'
import { ForwardFailedError, NOT_HOLDER_HEADER, forwardOperation, relayAnswer, type ForwardAnswer } from './send.ts'

/** What an instance of a cluster needs to hand a request to another one (its advertised URL is the holder hint of its devices). */
export interface ClusterRouting {
  secret: string
  advertiseUrl: string
  instances: Instances
  events: GatewayEvents
}

type KnownHolder = { id: string; url: string }

/** At most this many devices' holders are remembered per cluster (the oldest entry goes first). */
const MAX_KNOWN_DEVICES = 50_000

/** Which other instance holds a device, as the last forward found it, per cluster: a hint, safe as one (docs/scaling.md, "Where it goes"). */
const knownHolders = new WeakMap<ClusterRouting, Map<string, KnownHolder>>()

/** What routeToHolder needs; `baseUrlOf` the public URL the client called. */
interface HolderRoutingDeps {
  services: OperationServices
  routing: SessionRouting
  cluster?: ClusterRouting
  baseUrlOf(ctx: Context, state: RequestState): string
}

/** Middleware: an operation needing its device's session runs where the device is held: here it goes on, else it is forwarded once and the answer relayed. */
export function routeToHolder(path: string, deps: HolderRoutingDeps): Middleware {
  const { routing, cluster } = deps
  const holders = cluster && (knownHolders.get(cluster) ?? knownHolders.set(cluster, new Map()).get(cluster)!)
  const knownHolder = (deviceId: string) => {
    const known = holders?.get(deviceId)
    if (known === undefined || cluster!.instances.view.isAlive(known.id)) return known
    holders!.delete(deviceId)
    return undefined
  }
  const held = cluster ? (ctx: Context) => ctx.set(HOLDER_HEADER, cluster.advertiseUrl) : () => {}
  /** Forward to `instanceId` and relay its answer; remembered as the device's holder when it answered as one. */
  const forward = async (ctx: Context, state: RequestState, instanceId: string, deviceId?: string) => {
    const url = (await cluster?.instances.recordOf(instanceId))?.url
    if (!cluster || !url || state.forwardedFrom) throw moving(new Error(`the device is held by instance ${instanceId}`))
    const answer = await send(ctx, state, { id: instanceId, url })
    if (deviceId && answer.status !== 503 && !answer.notHolder) {
      if (holders!.size >= MAX_KNOWN_DEVICES && !holders!.has(deviceId)) holders!.delete(holders!.keys().next().value!)
      holders!.set(deviceId, { id: instanceId, url })
    }
    relayAnswer(ctx, answer)
  }
  /** POST the request, signed, to the holder `to` (a `forward` event either way). */
  const send = async (ctx: Context, state: RequestState, to: KnownHolder): Promise<ForwardAnswer> => {
    const { secret, instances, events } = cluster!
    let ok = false
    try {
      const signed = { secret, from: instances.id, to: to.id, clientIp: ctx.ip, clientBaseUrl: deps.baseUrlOf(ctx, state) }
      const answer = await forwardOperation({ baseUrl: to.url, path, ...state.body!, ...signed })
      ok = true
      return answer
    } finally {
      events.emit('forward', { operation: state.operation?.name, to: to.id, ok })
    }
  }
  /** Forward to the remembered holder: undefined once answered; else (nothing ran) forgotten, and what to answer if the store names it again. */
  const viaKnown = async (ctx: Context, state: RequestState, deviceId: string, known: KnownHolder): Promise<(() => void) | undefined> => {
    let answer: ForwardAnswer
    try {
      answer = await send(ctx, state, known)
    } catch (err) {
      holders!.delete(deviceId)
      if (err instanceof ForwardFailedError && err.reason === 'unreachable') return () => Promise.reject(err)
      throw err
    }
    if (answer.status === 503 || answer.notHolder) holders!.delete(deviceId)
    if (answer.notHolder) return () => relayAnswer(ctx, answer)
    relayAnswer(ctx, answer)
    return undefined
  }
  const onHolder = async (ctx: Context, next: Next, state: RequestState, device: Device) => {
    if (!routing.holdsHere(device)) {
      const forwarded = state.forwardedFrom !== undefined
      const known = forwarded ? undefined : knownHolder(device.id)
      const stale = known && (await viaKnown(ctx, state, device.id, known))
      if (known && !stale) return
      const holder = await routing.holderOf(device, forwarded).catch(err => {
        // Forwarded here for a device this instance does not hold: refused before anything ran.
        if (forwarded && isGatewayError(err, 'holder-unavailable')) ctx.set(NOT_HOLDER_HEADER, '1')
        throw err
      })
      if (holder !== undefined) return stale && holder === known!.id ? stale() : forward(ctx, state, holder, device.id)
    }
    if (state.session !== 'connected') return (held(ctx), next())
    state.status = await routing.connected(device)
    const letGo = routing.letGoGuard(device)
    held(ctx)
    return next().catch(err => {
      throw letGo(err)
    })
  }
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
    if (session === 'device' && routing.holdsHere(device!)) return (held(ctx), next())
    return onHolder(ctx, next, state, device!)
  }
}
