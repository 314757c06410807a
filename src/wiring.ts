import { createAccounts } from './domain/accounts.ts'
import { deviceAgents, startAgents } from './domain/agents.ts'
import { createDevices } from './domain/devices.ts'
import { flowConversations } from './domain/flows.ts'
import { Instances } from './domain/instances.ts'
import { deviceBalancer } from './domain/cluster/device-balancer.ts'
import { DeviceLeases } from './domain/cluster/device-leases.ts'
import { sessionRouting } from './domain/cluster/session-routing.ts'
import { guardTransport } from './domain/guarded-transport.ts'
import { MediaLinks, mediaRefOf } from './domain/media-links.ts'
import { messageFeed } from './domain/message-feed.ts'
import { createMessaging } from './domain/messaging/index.ts'
import { MediaBudget } from './domain/messaging/media-budget.ts'
import { shareLinks } from './domain/share-links.ts'
import { startWebhookOutbox } from './domain/webhooks/outbox.ts'
import { senderPolicy } from './domain/webhooks/sender-policy.ts'
import { defaultAdapters } from './defaults.ts'
import { GatewayEvents } from './events.ts'
import { childLogger } from './logger.ts'
import type { OperationServices } from './operations/operation.ts'
import type { ResolvedOptions } from './resolve-options.ts'
import { prefixedStorage } from './ports/storage.ts'
import type { IncomingMessage, TransportEvent } from './ports/transport.ts'
import { RateLimits } from './security/rate-limits.ts'
import { cacheEpoch } from './store/cache-epoch.ts'
import { guardStorage, StorageUnavailableError } from './store/guarded-storage.ts'
import { createRetryBuffer } from './store/retry-buffer.ts'
import { SpillFile } from './store/spill-file.ts'
import { KeyedLock } from './store/keyed-lock.ts'
import { storeIdentity } from './store/store-identity.ts'

/** The gateway's parts, wired: what createGateway serves and closes. */
export type Wiring = Awaited<ReturnType<typeof wireGateway>>

/**
 * Build the gateway's parts from its resolved options: the adapters (defaults filled in), the guarded
 * store and transport, the domain services, the webhook outbox and the agents; start the transport.
 * A start that fails partway stops what it set going (newest first; a step that fails to stop is
 * logged) and rejects with the failure: no instance record left live on the store, no heartbeat or poller.
 */
export async function wireGateway(resolved: ResolvedOptions) {
  const started: [name: string, stop: () => unknown][] = []
  try {
    return await wireParts(resolved, (name, stop) => void started.push([name, stop]))
  } catch (err) {
    for (const [name, stop] of started.reverse())
      await Promise.resolve()
        .then(stop)
        .catch(stopErr => resolved.logger.error({ err: stopErr }, `failed start: stopping ${name} failed; going on with the rest`))
    throw err
  }
}

/** wireGateway's steps; `started` learns how to stop each thing as it is set going. */
async function wireParts(resolved: ResolvedOptions, started: (name: string, stop: () => unknown) => void) {
  const logger = resolved.logger
  const adapters = await defaultAdapters(resolved)
  if (adapters.ownsStorage) started('the store', () => adapters.storage.close?.())
  started('the webhook sender', () => adapters.webhooks.close?.())
  // The store answering again after a failure: what the incoming buffer and the webhook outbox kept is offered at once (set once the incoming buffer started).
  let storeAnswers = (): void => {}
  const storage = guardStorage(adapters.storage, resolved.storageTimeoutMs, childLogger(logger, { module: 'store' }), () => storeAnswers())
  const lock = new KeyedLock()
  // Names this store's spill files: a gateway on another store sharing the folder (another app, staging by production) leaves them alone.
  const storeId = await storeIdentity(storage)
  const events = new GatewayEvents()
  started('the event listeners', () => events.removeAllListeners())
  const transport = guardTransport(adapters.transport, resolved.messaging.sendTimeoutMs)
  // This process in the store's registry of live instances: claims on shared work name it.
  const instances = new Instances(storage, lock, resolved.instances, childLogger(logger, { module: 'instances' }), resolved.cluster?.advertiseUrl)
  started('the instance record', () => instances.stop()) // also one written by a start that failed after it
  await instances.start(resolved.cluster !== undefined)
  // Records read by requests are cached in the process; a change others must see at once drops them everywhere.
  const epoch = cacheEpoch(storage, 100, childLogger(logger, { module: 'cache' }))
  started('the cache epoch poll', () => epoch.stop())
  await epoch.start()
  const accounts = createAccounts(storage, lock, resolved.plans, resolved.timeZone, resolved.cacheTtlMs, epoch)
  const devices = createDevices(storage, lock, transport, events, childLogger(logger, { module: 'devices' }), resolved.cacheTtlMs, epoch)
  // A device's session is opened only by the instance holding its lease; the balancer shares out the devices nobody holds.
  const leases = new DeviceLeases(
    storage,
    lock,
    instances,
    transport,
    { maxDevices: resolved.cluster?.maxDevices, clustered: resolved.cluster !== undefined },
    childLogger(logger, { module: 'leases' }),
    events,
  )
  const balancer = deviceBalancer(leases, instances, devices, resolved.instances.heartbeatMs, childLogger(logger, { module: 'leases' }))
  devices.onRemove(device => leases.forget(device.id))
  const agents = deviceAgents(storage, lock, devices)
  const links = shareLinks(storage, lock, devices, resolved.shareLinkTtlMs)
  devices.onRemove(device => links.removeDevice(device))
  devices.onRemove(device => agents.removeDevice(device))
  const mediaLinks = new MediaLinks(storage)
  const feed = messageFeed(events, childLogger(logger, { module: 'feed' }))
  const messaging = createMessaging({
    options: resolved.messaging,
    storage,
    lock,
    transport,
    media: adapters.media,
    devices,
    accounts,
    feed,
    events,
    liveness: instances.view,
    fence: instances, // also outside cluster mode: a process that starts once this one's heartbeat lapsed (a pause) takes its claims over
    logger: childLogger(logger, { module: 'messaging' }),
  })
  started('the scheduler and send queues', () => messaging.close())
  devices.onRemove(device => messaging.removeDevice(device))
  const flows = flowConversations(storage, lock, resolved.agents.historyLimit)
  devices.onRemove(device => flows.removeDevice(device.id))
  // Request counters: in the store when every instance reaches it (shared limits), else in this process.
  const rateLimits = new RateLimits(resolved.rateLimits, storage, childLogger(logger, { module: 'rate-limit' }))
  // The outbox subscribes to the feed first: events are stored before anything else sees them.
  const outbox = startWebhookOutbox({
    storage,
    lock,
    devices,
    accounts,
    epoch,
    feed,
    sender: adapters.webhooks,
    events,
    logger: childLogger(logger, { module: 'webhooks' }),
    settings: resolved.webhookDelivery,
    liveness: instances.view,
    fence: instances, // also outside cluster mode: a process that starts once this one's heartbeat lapsed (a pause) adopts its events
    spill: new SpillFile(resolved.spillDir, `webhooks-${storeId}`),
  })
  started('the webhook outbox', () => outbox.close())
  const agentRunner = startAgents({ agents, flows, messaging, feed, devices, accounts }, resolved.agents, childLogger(logger, { module: 'agents' }))
  started('the agents', () => agentRunner.close())
  const clustered = resolved.cluster !== undefined
  const settings: OperationServices['settings'] = {
    allowPrivateUrls: resolved.allowPrivateUrls,
    acceptsWebhookUrl: senderPolicy(adapters.webhooks, childLogger(logger, { module: 'webhooks' })),
    timeZone: resolved.timeZone,
    otpTtlMs: resolved.messaging.otpTtlMs,
  }

  // Transport events the store could not take (it was down): kept in order and recorded once it is back.
  const incoming = createRetryBuffer<TransportEvent>({
    what: 'incoming events',
    process: recordEvent,
    logger,
    spill: new SpillFile(resolved.spillDir, `incoming-${storeId}`),
  })

  // Events the transport handed over whose record (or keeping) is under way: the stop waits for them before it puts the kept ones away.
  let recording = 0
  let allRecorded: (() => void) | undefined
  async function onTransportEvent(event: TransportEvent): Promise<void> {
    recording++
    try {
      // Behind those already waiting (events keep their order): kept at once while the store is down, but while they are
      // offered to it (it answers again) this one waits, and is recorded before the transport is told it was.
      if (incoming.size > 0 && !(await incoming.offered())) return incoming.keep(event)
      try {
        await recordEvent(event)
      } catch (err) {
        incoming.keep(event, err)
      }
    } finally {
      if (--recording === 0) allRecorded?.()
    }
  }

  /** Record one transport event; throws only while the store is unavailable (then it is kept and offered again). */
  async function recordEvent(event: TransportEvent): Promise<void> {
    try {
      if (event.type === 'status') {
        // From a session let go of here while another live instance took the device (a status kept while the store was away): that one's status stands.
        const elsewhere = clustered && ![undefined, leases.me].includes(await leases.holder(event.deviceId))
        if (!elsewhere) await devices.applyStatus(event.deviceId, event.status)
        // Another connection took the session: another instance (its lease shows it), or another client.
        if (event.status.state === 'replaced') await leases.verify()
        if (event.status.connected && !elsewhere) await links.connected(event.deviceId)
        if (['closed', 'replaced', 'logged-out'].includes(event.status.state) && !elsewhere) await links.linkEnded(event.deviceId)
        if (event.status.state === 'logged-out' && !elsewhere) await links.loggedOut(event.deviceId)
      } else if (event.type === 'qr') {
        await links.rememberQr(event.deviceId, event.qr)
      } else if (event.type === 'message') {
        const device = await devices.get(event.deviceId)
        logger.debug({ deviceId: event.deviceId, messageId: event.message.id, known: device !== undefined }, 'incoming message')
        // A code the account sent through another of its devices (linked to this phone too) never reaches a webhook either.
        if (device && !(await messaging.otps.isCodeText(device, event.message))) await feed.publish(device, await withMediaUrl(event.deviceId, event.message))
      } else if (event.type === 'message-failed') {
        const device = await devices.get(event.deviceId)
        // From the device's LID as its other own messages are (the session's, as the messenger reads it for a sent text).
        const status = device && (transport.statusNow?.(event.deviceId) ?? (await transport.status(event.deviceId).catch(() => undefined)))
        if (device) await outbox.recordFailure(device, event, status?.lid)
      }
    } catch (err) {
      if (err instanceof StorageUnavailableError) throw err
      logger.error({ err, event: event.type, deviceId: event.deviceId }, 'transport event not recorded')
    }
  }

  /** Give a media message that carries no bytes a signed URL to fetch them from, when possible. */
  async function withMediaUrl(deviceId: string, message: IncomingMessage): Promise<IncomingMessage> {
    const content = message.content
    const media = content.kind === 'image' || content.kind === 'video' || content.kind === 'audio' || content.kind === 'document'
    if (!media || content.base64 || content.url || !transport.downloadMedia || !resolved.baseUrl) return message
    const token = await mediaLinks.sign({ deviceId, message: mediaRefOf(message) })
    return { ...message, content: { ...content, url: `${resolved.baseUrl}/media/${token}` } }
  }

  started('the incoming events', () => incoming.close())
  await incoming.start()
  storeAnswers = () => {
    void incoming.offered(true)
    outbox.storeAnswers()
  }
  // Cluster mode: while this instance is fenced another may hold its devices, so the transport's writes (signal keys, creds) are refused (docs/scaling.md).
  const fenced = () => (clustered && instances.fenceUp ? fencedWriteError() : undefined)
  started('the transport', () => transport.stop()) // a start that threw partway lets go of what it opened
  await transport.start({
    storage: prefixedStorage(storage, 'transport:', fenced),
    logger: childLogger(logger, { module: 'transport' }),
    emit: onTransportEvent,
  })

  return {
    resolved,
    logger,
    storage,
    lock,
    epoch,
    leases,
    routing: sessionRouting(devices, leases, clustered),
    balancer,
    instances,
    transport,
    webhookSender: adapters.webhooks,
    events,
    accounts,
    devices,
    agents,
    links,
    mediaLinks,
    feed,
    flows,
    messaging,
    mediaBudget: new MediaBudget(resolved.mediaBytesInFlight),
    rateLimits,
    outbox,
    incoming,
    settings,
    /** Stop the agents and the scheduler, close the sessions and the outbox, release the store the gateway made. Every step runs, in order, even past one that fails (logged; the first failure is thrown at the end): a failed session close must not leave the outbox's events unspilled. */
    async close(): Promise<void> {
      const failures: unknown[] = []
      const step = (name: string, run: () => unknown) =>
        Promise.resolve()
          .then(run)
          .catch(err => void (failures.push(err), logger.error({ err }, `shutdown: ${name} failed; going on with the rest`)))
      await step('the balancer', () => balancer.stop()) // takes nothing more; a scan opening devices ends first: what it took is handed back below, never opened on a stopped transport
      await step('the agents', () => agentRunner.close())
      await step('the scheduler and send queues', () => messaging.close())
      // Sessions closed and leases handed back, so the other instances take the devices at once.
      await step('handing back the leases', () => leases.releaseAll())
      await step('telling the others', () => instances.leaving()) // they take the devices within a heartbeat, while this one flushes its outbox
      await step('the transport', () => transport.stop())
      // Those under way first (a store call that fails now keeps its event): kept after the buffer closed, it was lost.
      await step('the incoming events', async () => (recording > 0 && (await new Promise<void>(resolve => (allRecorded = resolve))), incoming.close()))
      await step('the webhook outbox', () => outbox.close())
      await step('the instance record', () => instances.stop())
      epoch.stop()
      await step('the webhook sender', () => adapters.webhooks.close?.())
      if (adapters.ownsStorage) await step('the store', () => adapters.storage.close?.())
      events.removeAllListeners()
      if (failures.length > 0) throw failures[0]
    },
  }
}

/** Why a transport write was refused: this instance is fenced (its heartbeat is late). */
function fencedWriteError(): Error {
  const err = new Error('transport storage write refused: this instance is fenced (its heartbeat is late), another instance may hold its devices now')
  err.name = 'FencedWriteError'
  return err
}
