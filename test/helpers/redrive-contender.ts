/**
 * One gateway process's webhook outbox for test/domain/webhooks/redrive-processes.test.ts: opens the
 * store given in STORE_URL (namespace STORE_NAMESPACE), delivers device d1's events to RECEIVER_URL
 * with the default sender, and redrives the dead letter EVENT_ID. With HOLD set, its write of the
 * redriven record waits (it prints `holding`) until a line arrives on stdin. Once nothing is pending
 * it prints one JSON line: what redrive() answered. Not a test by itself.
 */
import { createInterface } from 'node:readline'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { httpWebhookSender } from '../../adapters/webhook-http/index.ts'
import type { Devices } from '../../src/domain/devices.ts'
import { WebhookOutbox } from '../../src/domain/webhooks/outbox.ts'
import { GatewayEvents } from '../../src/events.ts'
import { silentLogger } from '../../src/logger.ts'
import { requireAtomic } from '../../src/ports/storage.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { waitFor } from './gateway.ts'
import { device, settings } from './outbox.ts'

const opened = requireAtomic(await storageFromUrl(process.env.STORE_URL!, { namespace: process.env.STORE_NAMESPACE }), 'redrive contender')
const go = new Promise<void>(resolve => createInterface({ input: process.stdin }).once('line', () => resolve()))
const storage = process.env.HOLD
  ? {
      ...opened,
      async add(key: string, value: unknown, ttlMs?: number) {
        if (key.startsWith('webhook-outbox:')) (console.log('holding'), await go)
        return opened.add(key, value, ttlMs)
      },
    }
  : opened
const devices = { get: async (id: string) => (id === 'd1' ? { ...device('d1'), webhookUrl: process.env.RECEIVER_URL } : undefined) } as unknown as Devices
const sender = httpWebhookSender({ allowPrivateUrls: true })
const id = `${process.pid}`
const outbox = new WebhookOutbox({
  ...{ storage, lock: new KeyedLock(), devices, sender, events: new GatewayEvents(), logger: silentLogger },
  settings: settings({ timeoutMs: 5_000 }),
  liveness: { id, isAlive: () => true, onDeparture() {} },
})
await outbox.start()
const redriven = await outbox.redrive(process.env.EVENT_ID!)
await waitFor(async () => (await outbox.pending()) === 0, 10_000, 'nothing pending')
await outbox.close()
await sender.close!()
console.log(JSON.stringify({ redriven }))
await opened.close!()
