import type { LinkChallenge, Transport, TransportEvent } from 'zapgate'

/** A transport whose devices' current link challenges can be read (what the phone routes scan by appkey). */
export interface WatchedTransport {
  /** The transport to give the gateway: `transport` with its link challenges watched. */
  transport: Transport
  /** The QR (latest refresh) or pairing code the device shows now; undefined once it linked or never asked. */
  challengeOf(deviceId: string): LinkChallenge | undefined
  /**
   * The device that shows the QR text or pairing code `shown` now (a QR by its keys, the same in
   * each refresh of one link), for scans by QR or code; undefined when no device shows it.
   */
  deviceShowing(shown: string): string | undefined
  /**
   * Resolves once the gateway has taken the device's next `open` status (its emit settled: operation 5
   * then reads it open); rejects when `signal` aborts first. What a phone's scan waits for, as on the simulator.
   */
  whenOpen(deviceId: string, signal: AbortSignal): Promise<void>
}

/**
 * Watch the link challenges of a transport (the answer of `link` and each later `qr` event), so that
 * the phone routes of a gateway on the real stack can scan a device by its appkey, as they do on the
 * simulated network. Everything else passes through unchanged.
 */
export function watchLinkChallenges(transport: Transport): WatchedTransport {
  const challenges = new Map<string, LinkChallenge>()
  const openWaiters = new Map<string, Set<() => void>>()
  const note = (event: TransportEvent) => {
    if (event.type === 'qr') challenges.set(event.deviceId, { kind: 'qr', qr: event.qr })
    else if (event.type === 'status' && event.status.state === 'open') challenges.delete(event.deviceId)
  }
  const watched = new Proxy(transport, {
    get(target, key) {
      if (key === 'start')
        return (context: Parameters<Transport['start']>[0]) =>
          target.start({
            ...context,
            emit: async event => {
              note(event)
              await context.emit(event)
              if (event.type === 'status' && event.status.state === 'open') for (const opened of openWaiters.get(event.deviceId) ?? []) opened()
            },
          })
      if (key === 'link') {
        return async (deviceId: string, request: Parameters<Transport['link']>[1]) => {
          const challenge = await target.link(deviceId, request)
          challenges.set(deviceId, challenge)
          return challenge
        }
      }
      const value = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  const deviceShowing = (shown: string) => {
    for (const [deviceId, challenge] of challenges) {
      if (challenge.kind === 'qr' ? qrKeys(challenge.qr) === qrKeys(shown) : challenge.code === shown) return deviceId
    }
    return undefined
  }
  const whenOpen = (deviceId: string, signal: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      const waiters = openWaiters.get(deviceId) ?? new Set()
      openWaiters.set(deviceId, waiters)
      const done = () => {
        waiters.delete(settle)
        if (waiters.size === 0 && openWaiters.get(deviceId) === waiters) openWaiters.delete(deviceId)
        signal.removeEventListener('abort', aborted)
      }
      const settle = () => (done(), resolve())
      const aborted = () => (done(), reject(signal.reason))
      if (signal.aborted) return aborted()
      waiters.add(settle)
      signal.addEventListener('abort', aborted, { once: true })
    })
  return { transport: watched, challengeOf: deviceId => challenges.get(deviceId), deviceShowing, whenOpen }
}

/** A QR text without its ref (`ref,noise key,identity key,secret...`): what each refresh of one link keeps. */
function qrKeys(qr: string): string {
  return qr.slice(qr.indexOf(',') + 1)
}
