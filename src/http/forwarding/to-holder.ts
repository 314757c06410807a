import { hash } from 'node:crypto'
import type { Context, Middleware, Next } from 'koa'
import { isGatewayError } from '../../errors.ts'
import type { GatewayEvents } from '../../events.ts'
import { moving, type NewDevice, type SessionRouting } from '../../domain/cluster/session-routing.ts'
import type { Instances } from '../../domain/instances.ts'
import type { Device } from '../../domain/devices.ts'
import type { SessionStatus } from '../../ports/transport.ts'
import type { Operation, OperationServices, PathEntry } from '../../operations/operation.ts'
import { operationSelector } from '../select-operation.ts'
import { requestState, type RequestState } from '../request-state.ts'
import { HOLDER_HEADER } from '../../client-api.ts'
import { putBounded } from '../../store/bounded-map.ts'
import { ForwardFailedError, NOT_HOLDER_HEADER, relayAnswer, type ForwardAnswer, type ForwardRequest } from './send.ts'

/** What an instance of a cluster needs to hand a request to another one (its advertised URL is the holder hint of its devices). */
export interface ClusterRouting {
  secret: string
  advertiseUrl: string
  instances: Instances
  events: GatewayEvents
}

type KnownHolder = { id: string; url: string }

/** At most this many callers' holders are remembered per cluster (the oldest entry goes first). */
const MAX_KNOWN = 50_000

/** Which other instance held the device of each caller's request (callerKey) when a forward last went through, per cluster: a hint, safe as one (docs/scaling.md, "Where it goes"). */
const knownHolders = new WeakMap<ClusterRouting, Map<string, KnownHolder>>()

/** What routeToHolder needs; `baseUrlOf` the public URL the client called. */
interface HolderRoutingDeps {
  services: OperationServices
  routing: SessionRouting
  cluster?: ClusterRouting
  baseUrlOf(ctx: Context, state: RequestState): string
  /** Send a forward (coalesce.ts: one per request, or with others to the same holder). */
  forward(request: ForwardRequest): Promise<ForwardAnswer>
}

/**
 * Middleware: an operation needing its device's session runs where the device is held: here it goes on, else it is forwarded once and the answer relayed.
 * `early` (cluster mode, before the operation is validated): a caller's request for a device a forward found held elsewhere goes there at once.
 */
export function routeToHolder(entry: PathEntry, deps: HolderRoutingDeps): { early: Middleware[]; holder: Middleware } {
  const { routing, cluster } = deps
  const known = cluster && (knownHolders.get(cluster) ?? knownHolders.set(cluster, new Map()).get(cluster)!)
  const held = cluster ? (ctx: Context) => ctx.set(HOLDER_HEADER, cluster.advertiseUrl) : () => {}
  /** Forward to `instanceId` and relay its answer; remembered as the holder for this caller's device when it answered as one. */
  const forward = async (ctx: Context, state: RequestState, instanceId: string) => {
    const url = (await cluster?.instances.recordOf(instanceId))?.url
    if (!cluster || !url || state.forwardedFrom) throw moving(new Error(`the device is held by instance ${instanceId}`))
    const answer = await send(ctx, state, { id: instanceId, url })
    // Refused before anything ran (not the holder, or a new process at its URL): moving, to be tried again, not the refusal relayed.
    if (answer.notHolder) throw moving(new Error(`instance ${instanceId} refused the forward: it does not hold the device`))
    const key = (answer.body as { status?: unknown }).status !== 503 && callerKey(state.operation!, state.body!.fields)
    if (key) putBounded(known!, key, { id: instanceId, url }, MAX_KNOWN) // the oldest out through one kept iterator: a new one steps over every deleted entry
    return relayAnswer(ctx, answer) // a refused key was counted by the holder (gatewayRateLimit)
  }
  /** POST the request, signed, to the holder `to` (a `forward` event either way: not `ok` when unanswered, or refused by a process not holding the device). */
  const send = async (ctx: Context, state: RequestState, to: KnownHolder): Promise<ForwardAnswer> => {
    const { secret, instances, events } = cluster!
    let ok = false
    try {
      const signed = { secret, from: instances.id, to: to.id, clientIp: ctx.ip, clientBaseUrl: deps.baseUrlOf(ctx, state) }
      const answer = await deps.forward({ baseUrl: to.url, path: entry.path, ...state.body!, ...signed })
      ok = !answer.notHolder // refused before anything ran: no holder answered it (forwarded again, or 503 to the client)
      return answer
    } finally {
      events.emit('forward', { operation: state.operation?.name, to: to.id, ok })
    }
  }
  const select = operationSelector(entry)
  /** To the remembered holder while it lives, unchecked: it selects, validates and authenticates as for a direct request (docs/scaling.md); refused before anything ran, on (`refusedBy`). */
  const early = (ctx: Context, next: Next) => {
    const state = requestState(ctx)
    const operation = known!.size > 0 && !state.forwardedFrom ? select(state.body!) : undefined
    const key = operation?.device && callerKey(operation, state.body!.fields)
    const holder = key && known!.get(key)
    if (!holder || (!cluster!.instances.view.isAlive(holder.id) && known!.delete(key))) return next()
    state.operation = operation
    const refused = (answer: () => unknown) => ((state.refusedBy = { id: holder.id, answer }), next())
    return send(ctx, state, holder).then(
      answer => {
        const { status } = answer.body as { status?: unknown }
        // A key or device gone since (or a bad input), a refused forward (the holder restarted at that URL), or moving.
        if (status === 401 || status === 403 || status === 404 || status === 503) known!.delete(key)
        return answer.notHolder
          ? refused(() => Promise.reject(moving(new Error(`instance ${holder.id} refused the forward: it does not hold the device`))))
          : relayAnswer(ctx, answer)
      },
      err => {
        known!.delete(key)
        if (err instanceof ForwardFailedError && err.reason === 'unreachable') return refused(() => Promise.reject(err))
        throw err
      },
    )
  }
  /** Not held here now: the holder the store names gets it, else this instance takes the device and works it. */
  const notHeld = async (ctx: Context, next: Next, state: RequestState, device: Device) => {
    const forwarded = state.forwardedFrom !== undefined
    const holder = await routing.holderOf(device, forwarded, false, state.operation?.device?.deletes === true).catch(err => {
      // Forwarded here for a device this instance does not hold: refused before anything ran.
      if (forwarded && isGatewayError(err, 'holder-unavailable')) ctx.set(NOT_HOLDER_HEADER, '1')
      throw err
    })
    if (holder !== undefined) return holder === state.refusedBy?.id ? state.refusedBy!.answer() : forward(ctx, state, holder)
    return onHolder(ctx, next, state, device)
  }
  /** Held here: on, with the open session's status when the operation needs one (known at once on a send's usual path: no promise). */
  const onHolder = (ctx: Context, next: Next, state: RequestState, device: Device): Promise<unknown> => {
    if (state.session !== 'connected') return (held(ctx), next())
    const status = routing.connected(device)
    return status instanceof Promise ? status.then(known => whileOpen(ctx, next, state, device, known)) : whileOpen(ctx, next, state, device, status)
  }
  /** On with the open session's `status`; a `not-connected` after this instance let the device go is `holder-unavailable` (letGoGuard, applied by the error boundary: no promise of its own). */
  const whileOpen = (ctx: Context, next: Next, state: RequestState, device: Device, status: SessionStatus) => {
    state.status = status
    state.errorMapper = routing.letGoGuard(device)
    held(ctx)
    return next()
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
  const holder = function gatewayHolder(ctx: Context, next: Next) {
    const state = requestState(ctx)
    const { session, device } = state
    if (session === undefined) return next()
    if (session === 'link') return onLinker(ctx, next, state)
    if (!routing.holdsHere(device!)) return notHeld(ctx, next, state, device!)
    return onHolder(ctx, next, state, device!)
  }
  return { early: cluster ? [early] : [], holder }
}

// --- Internal helpers ---

/** Who asks which operation of which device, as a hash (no key kept in clear); undefined unless both are text and (as the fields read) it needs the holder. */
function callerKey(operation: Operation, fields: Record<string, unknown>): string | undefined {
  const { session, ref } = operation.device!
  const [need, authkey, device] = [typeof session === 'function' ? session(fields) : session, fields.authkey, fields[ref]]
  const keyed = (need === 'device' || need === 'connected') && typeof authkey === 'string' && typeof device === 'string'
  return keyed ? hash('sha256', JSON.stringify([operation.name, authkey, device]), 'base64') : undefined
}
