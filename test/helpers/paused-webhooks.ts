/** Fixtures of the tests of webhooks held for a suspended or expired account: a gateway whose sender records what it is asked to POST. */
import type { GatewayEventMap } from '../../src/events.ts'
import type { GatewayOptions } from '../../src/index.ts'
import { internalsOf } from '../../src/internals.ts'
import type { Logger } from '../../src/logger.ts'
import type { OutboxRecord } from '../../src/domain/webhooks/outbox-store.ts'
import type { WebhookDelivery } from '../../src/ports/webhooks.ts'
import { waitFor, type TestGateway } from './gateway.ts'
import { DEVICE_PHONE, FRIEND } from './messaging.ts'

/** A gateway with one account and its linked device on DEVICE_PHONE, whose webhook deliveries are recorded (never POSTed), one at a time per device. */
export interface PausedWorld {
  t: TestGateway
  email: string
  authkey: string
  deviceId: string
  webhookUrl: string
  /** The texts the sender was asked to deliver for a device (default: the world's), in the order asked. */
  sent(deviceId?: string): string[]
  /** The gateway's `delivery` and `delivery-failed` events so far. */
  events: { delivery: GatewayEventMap['delivery'][0][]; 'delivery-failed': GatewayEventMap['delivery-failed'][0][] }
  /** A contact sends these texts to the device, one after the other, each recorded in the outbox before the next (a later `createdAt`). */
  receive(texts: string[]): Promise<string[]>
  /** Wait until `count` of the device's events were held (logged) or any was sent. */
  heldOrSent(count: number): Promise<void>
  /** The `attempts` of the device's stored events, oldest first. */
  attemptsStored(): Promise<number[]>
}

/** Start a gateway with `start` (given the options the world needs) and set up the world on it. */
export async function pausedWorld(start: (options: GatewayOptions) => Promise<TestGateway>): Promise<PausedWorld> {
  const deliveries: WebhookDelivery[] = []
  const held = new Set<string>()
  const note = (obj: object | string, msg?: string) => {
    if (msg === 'webhook event held: its account is suspended or expired' && typeof obj === 'object') held.add(String((obj as { key?: string }).key))
  }
  const logger: Logger = { debug: note, info: note, warn: note, error: note }
  const t = await start({
    allowPrivateUrls: true,
    rateLimit: false,
    logger,
    webhooks: { send: async delivery => (deliveries.push(delivery), { status: 200 }) },
  })
  // One attempt in flight per device (the gateway has 8, so its events may arrive in any order): the order the outbox puts them in line is the order they are sent.
  ;(internalsOf(t.gateway).outbox as any).loop.settings.concurrencyPerLane = 1
  const events: PausedWorld['events'] = { delivery: [], 'delivery-failed': [] }
  t.gateway.events.on('delivery', event => void events.delivery.push(event))
  t.gateway.events.on('delivery-failed', event => void events['delivery-failed'].push(event))
  const { authkey, email } = await t.register()
  const webhookUrl = 'http://127.0.0.1:9/hook'
  const { id: deviceId } = await t.linkedDevice(authkey, 'pausada', DEVICE_PHONE, { webhook: webhookUrl })
  const { storage } = internalsOf(t.gateway)
  const stored = async () => {
    const records: OutboxRecord[] = []
    for await (const [, record] of storage.list<OutboxRecord>(`webhook-outbox:${deviceId}:`)) records.push(record)
    return records.sort((a, b) => a.createdAt - b.createdAt)
  }
  const world: PausedWorld = {
    t,
    email,
    authkey,
    deviceId,
    webhookUrl,
    events,
    sent: (id = deviceId) => deliveries.filter(d => d.deviceId === id).map(d => JSON.parse(d.body).text as string),
    async receive(texts) {
      for (const text of texts) {
        const before = (await stored()).length + world.sent().length
        await t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text })
        await t.network.settled()
        await waitFor(async () => (await stored()).length + world.sent().length > before, 10_000, `the event of ${text} recorded`)
        const recordedAt = Date.now()
        await waitFor(() => Date.now() > recordedAt + 1, 1_000, 'the clock to move on')
      }
      return texts
    },
    heldOrSent: count => waitFor(() => held.size >= count || world.sent().length > 0, 15_000, `${count} events held`),
    attemptsStored: async () => (await stored()).map(record => record.attempts),
  }
  return world
}
