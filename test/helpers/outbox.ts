/** Fixtures of the webhook outbox tests: devices, a recording sender, an outbox over a Storage. */
import { WebhookOutbox } from '../../src/domain/webhooks/outbox.ts'
import type { WebhookSettings } from '../../src/domain/webhooks/config.ts'
import type { Device, Devices } from '../../src/domain/devices.ts'
import type { IncomingMessage } from '../../src/ports/transport.ts'
import type { WebhookDelivery, WebhookResponse, WebhookSender } from '../../src/ports/webhooks.ts'
import type { Storage } from '../../src/ports/storage.ts'
import { GatewayEvents } from '../../src/events.ts'
import { silentLogger } from '../../src/logger.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import type { Liveness } from '../../src/domain/instances.ts'
import { eventId, type OutboxRecord } from '../../src/domain/webhooks/outbox-store.ts'
import { webhookPayload } from '../../src/domain/webhooks/payload.ts'
import type { SpillFile } from '../../src/store/spill-file.ts'
import { soloLiveness } from './solo-liveness.ts'

/** The webhook secret every test device signs with. */
export const SECRET = 'whsec_' + Buffer.from('outbox test secret bytes').toString('base64')
/** Outbox settings for tests: short retries, a small timetable. */
export const settings = (extra: Partial<WebhookSettings> = {}): WebhookSettings => ({
  retryMs: [20],
  maxAgeMs: 60_000,
  timeoutMs: 1_000,
  concurrencyPerLane: 2,
  capacity: 5,
  lineLimit: 256,
  reconcileMs: 60_000,
  ...extra,
})

/** A linked, open device with a webhook. */
export function device(id: string): Device {
  return {
    id,
    accountId: 'acc',
    name: id,
    appkeyHash: 'h',
    appkeyIsName: false,
    webhookUrl: `https://receiver.example/${id}`,
    webhookSecret: SECRET,
    webhookEvents: { chat: true, group: true },
    connected: true,
    state: 'open',
    linked: true,
    shareTokens: [],
    agentIds: [],
    createdAt: 0,
  }
}

/** A Devices stand-in that knows devices d0..d9. */
export const devices = {
  async get(id: string) {
    return /^d\d$/.test(id) ? device(id) : undefined
  },
  peek(id: string) {
    return /^d\d$/.test(id) ? device(id) : undefined
  },
  async update() {
    return undefined
  },
} as unknown as Devices

/** A sender that records deliveries and answers with `status(delivery)` (a thrown error: no answer). */
export function recordingSender(status: (delivery: WebhookDelivery) => number = () => 200): WebhookSender & { sent: WebhookDelivery[] } {
  const sent: WebhookDelivery[] = []
  return {
    sent,
    async send(delivery): Promise<WebhookResponse> {
      sent.push(delivery)
      return { status: status(delivery) }
    },
  }
}

/** An outbox over `storage` delivering through `sender` (`spill`: its spill file; `withDevices`: the devices it reads, else d1 and d2 as `devices`). */
export function outbox(
  storage: Storage,
  sender: WebhookSender,
  extra: Partial<WebhookSettings> = {},
  liveness: Liveness = soloLiveness(),
  spill?: SpillFile,
  withDevices: Devices = devices,
): WebhookOutbox {
  return new WebhookOutbox({
    storage,
    lock: new KeyedLock(),
    devices: withDevices,
    sender,
    events: new GatewayEvents(),
    logger: silentLogger,
    settings: settings(extra),
    liveness,
    ...(spill ? { spill } : {}),
  })
}

/** Device d1 whose changes (`update`) are kept: `devices` reads and updates it, `current()` is it now. */
export function changingDevice(): { devices: Devices; current(): Device; set(device: Device): void } {
  let current = device('d1')
  const devices = {
    get: async (id: string) => (id === 'd1' ? current : undefined),
    peek: (id: string) => (id === 'd1' ? current : undefined),
    update: async (_id: string, change: (d: Device) => unknown) => {
      const copy = structuredClone(current)
      change(copy)
      return (current = copy)
    },
  } as unknown as Devices
  return { devices, current: () => current, set: next => void (current = next) }
}

/** An incoming 1:1 text whose text is its id. */
export function message(id: string): IncomingMessage {
  return {
    id,
    chat: '5511988880002',
    from: '5511988880002',
    to: '5511999990001',
    fromMe: false,
    isGroup: false,
    timestamp: Date.now(),
    content: { kind: 'text', text: id },
  }
}

/** The texts of what `sender` delivered, in order. */
export const texts = (sender: { sent: WebhookDelivery[] }) => sender.sent.map(d => JSON.parse(d.body).text as string)

/** A pending record of device d1 owned by `owner`, as a write that landed after its caller gave up leaves it. */
export function lateRecord(messageId: string, owner: string): OutboxRecord {
  const now = Date.now()
  const payload = webhookPayload(device('d1'), message(messageId))!
  return {
    id: eventId('d1', payload),
    deviceId: 'd1',
    accountId: 'acc',
    event: 'Texto',
    body: JSON.stringify(payload),
    createdAt: now,
    dueAt: now,
    attempts: 0,
    owner,
  }
}
