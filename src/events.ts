import { EventEmitter } from 'node:events'
import type { IncomingMessage, SessionStatus } from './ports/transport.ts'

/** What the gateway reports to its host, by event name. */
export interface GatewayEventMap {
  /** A message seen by a device (received, or sent by the gateway). */
  message: [{ deviceId: string; accountId: string; message: IncomingMessage }]
  /** A device's session changed state. */
  'device-status': [{ deviceId: string; accountId: string; status: SessionStatus }]
  /** A webhook event was delivered (2xx). */
  delivery: [{ deviceId: string; eventId: string; url: string; attempt: number; status: number }]
  /** A webhook attempt failed; `final` when the event moved to the dead-letter collection. */
  'delivery-failed': [
    {
      deviceId: string
      eventId: string
      /** The receiver tried ('' when the device had no webhook URL any more). */
      url: string
      attempt: number
      status?: number
      error?: string
      final: boolean
      /** Why the event was dead-lettered (`final` only): `max-age`, `gone` (410) or `no-webhook`. */
      reason?: 'max-age' | 'gone' | 'no-webhook'
      /** `final` only: whether attempt number `attempt` ended it; false when it was dead-lettered before an attempt (too old when due, no webhook URL, swept after another event's 410), `attempt` then counting those made. */
      attempted?: boolean
    },
  ]
  /** The gateway performed a network action for a device (a send, a reaction, a read receipt...), or failed to; a scheduled send dropped before the network is none. */
  send: [{ deviceId: string; kind: SendKind; ok: boolean; /** Why: a TransportError or GatewayError code, else `error`. */ reason?: string }]
  /** This instance took a device's lease (cluster): `from` names the instance it was taken over from (gone, or having handed it back). */
  lease: [{ deviceId: string; epoch: number; from?: string }]
  /** This instance forwarded an operation to the instance holding its device (cluster); `ok: false` when that one could not answer, or refused it as not holding the device. */
  forward: [{ operation?: string; to: string; ok: boolean }]
  /** One of the gateway's HTTP routes answered (only emitted while someone listens). */
  request: [
    {
      method: string
      /** The route pattern, e.g. `/api/create-message` or `/qr/:token`. */ route: string
      operation?: string
      status: number
      durationMs: number
    },
  ]
}

/** What a `send` event did: a message kind (media by its kind) or `read` (a read receipt). */
export type SendKind = 'text' | 'image' | 'video' | 'audio' | 'document' | 'contact' | 'location' | 'reaction' | 'delete' | 'buttons' | 'carousel' | 'read'

/** The gateway's typed event emitter (observability for hosts: subscribe with `gateway.events.on`). */
export class GatewayEvents extends EventEmitter<GatewayEventMap> {
  constructor() {
    super({ captureRejections: false })
    // A host listener that throws must never break the gateway.
    this.setMaxListeners(50)
  }

  /** Emit to every listener in turn, none letting a throw (or an async listener's rejection) escape into the gateway or keep the listeners after it from their call. */
  override emit<K extends keyof GatewayEventMap>(event: K, ...args: GatewayEventMap[K]): boolean {
    const listeners = this.rawListeners(event as any) as ((...values: unknown[]) => void)[] // a copy: `once` wrappers remove themselves
    for (const listener of listeners) {
      try {
        const result: unknown = listener.apply(this, args)
        // An async listener's rejection too: unhandled, it would stop the process.
        if (result instanceof Promise) result.catch(() => {})
      } catch {
        // a host's bug, not the gateway's
      }
    }
    return listeners.length > 0
  }
}
