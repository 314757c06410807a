import { GatewayError } from '../errors.ts'
import { TransportError, type MediaRef, type SessionStatus, type Transport } from '../ports/transport.ts'
import { Deadlines } from '../store/deadlines.ts'

/**
 * Wrap a transport: what it throws is a TransportError ('failed', 502), and `status`, `link` time out (504) after `timeoutMs`. A `logout`
 * is asked to give up (its signal aborted) after `timeoutMs`, and its answer, which tells whether it unlinked, is waited for up to as long
 * again: before, it was answered as timed out at once while it ran on, and could unlink and delete a device the gateway then kept.
 */
export function guardTransport(transport: Transport, timeoutMs: number): Transport {
  const deadlines = new Deadlines(timeoutMs)
  const backstop = new Deadlines(Math.min(2 * timeoutMs, 2 ** 31 - 1)) // a transport that does not heed the signal: the deletion still ends
  const late = (name: string) => () => new TransportError('timeout', `transport ${name} did not answer within ${timeoutMs} ms`)
  const timed = <T>(name: string, call: () => Promise<T>, convert = converted): Promise<T> => deadlines.run(convert(call), late(name))
  const logout = (deviceId: string): Promise<void> => {
    const abort = new AbortController()
    const answered = deadlines.watch(() => abort.abort(late('logout')()))
    return backstop.run(converted(() => transport.logout(deviceId, abort.signal)).finally(answered), late('logout'))
  }
  return {
    start: context => transport.start(context),
    stop: () => transport.stop(),
    connect: deviceId => converted(() => transport.connect(deviceId)),
    disconnect: deviceId => converted(() => transport.disconnect(deviceId)),
    link: (deviceId, request) => timed('link', () => transport.link(deviceId, request), linkConverted),
    status: deviceId => timed('status', () => transport.status(deviceId)),
    ...(transport.statusNow ? { statusNow: (deviceId: string) => statusNow(transport, deviceId) } : {}),
    logout,
    send: (deviceId, to, message) => converted(() => transport.send(deviceId, to, message)),
    markRead: (deviceId, target) => converted(() => transport.markRead(deviceId, target)),
    groupInfo: (deviceId, group) => converted(() => transport.groupInfo(deviceId, group)),
    groupCreate: (deviceId, subject, participants) => converted(() => transport.groupCreate(deviceId, subject, participants)),
    groupJoin: (deviceId, inviteCode) => converted(() => transport.groupJoin(deviceId, inviteCode)),
    ...(transport.downloadMedia ? { downloadMedia: (deviceId: string, target: MediaRef) => converted(() => transport.downloadMedia!(deviceId, target)) } : {}),
    ...(transport.ping ? { ping: () => converted(() => transport.ping!()) } : {}),
  }
}

/** Run `call`, turning anything it throws (synchronously or not) into a TransportError; `already-connected`, which only `link` may mean (409), is `failed` (502) from any other call: a host's transport throwing it from a send answered a 409 no operation of the kind declares. */
function converted<T>(call: () => Promise<T>, rethrow: (err: unknown) => never = rethrownBesideLink): Promise<T> {
  try {
    return Promise.resolve(call()).catch(rethrow)
  } catch (err) {
    return Promise.reject(err).catch(rethrow)
  }
}

/** `converted` for `link`, whose `already-connected` is its own (the device is linked already: 409). */
function linkConverted<T>(call: () => Promise<T>): Promise<T> {
  return converted(call, rethrown)
}

function rethrownBesideLink(err: unknown): never {
  if (err instanceof TransportError && err.code === 'already-connected') throw new TransportError('failed', err.message, { cause: err })
  return rethrown(err)
}

/** A transport's `statusNow`; one that throws knows nothing (undefined: the gateway asks `status`). */
function statusNow(transport: Transport, deviceId: string): SessionStatus | undefined {
  try {
    return transport.statusNow!(deviceId)
  } catch {
    return undefined
  }
}

function rethrown(err: unknown): never {
  if (err instanceof TransportError || err instanceof GatewayError) throw err
  throw new TransportError('failed', err instanceof Error ? err.message : 'the transport failed', { cause: err })
}
