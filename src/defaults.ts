import type { ResolvedOptions } from './resolve-options.ts'
import type { MediaFetcher } from './ports/media.ts'
import type { Storage } from './ports/storage.ts'
import type { Transport } from './ports/transport.ts'
import type { WebhookSender } from './ports/webhooks.ts'
import { requireInstalled } from './optional-package.ts'

/**
 * The one place where default adapters are wired. Each is imported lazily, so a host that passes its
 * own adapter never loads the default's libraries (Baileys, got, Keyv). An optional peer package that
 * an option needs (Baileys for the default transport, prom-client for metrics) is checked first, so a
 * missing one fails before anything starts, with a message naming it.
 */
export async function defaultAdapters(resolved: ResolvedOptions) {
  const given = resolved.adapters
  if (resolved.service.metrics) requireInstalled('prom-client', 'The metrics option', { range: '^15' })
  if (!given.transport)
    requireInstalled('@whiskeysockets/baileys', 'The default transport (WhatsApp through Baileys; pass `transport` to use another)', { range: '7.0.0-rc14' })
  // The default store is a Map of this process: nothing else reaches it (so request counters stay in a bounded map).
  const storage: Storage = given.storage ?? Object.assign((await import('../adapters/storage-keyv/index.ts')).keyvStorage(), { reach: 'process' as const })
  const transport: Transport = given.transport ?? (await baileysTransport())
  const webhooks: WebhookSender =
    given.webhooks ??
    (await import('../adapters/webhook-http/index.ts')).httpWebhookSender({
      allowPrivateUrls: resolved.allowPrivateUrls,
      timeoutMs: resolved.webhookDelivery.timeoutMs,
    })
  const media: MediaFetcher = given.media ?? (await import('../adapters/media-http/index.ts')).httpMediaFetcher({ allowPrivateUrls: resolved.allowPrivateUrls })
  return { storage, transport, webhooks, media, ownsStorage: given.storage === undefined }
}

// --- Internal helpers ---

async function baileysTransport(): Promise<Transport> {
  // The adapter imports Baileys itself on first use, so loading it here costs nothing until then.
  const { baileysTransport } = await import('../adapters/transport-baileys/index.ts')
  return baileysTransport()
}
