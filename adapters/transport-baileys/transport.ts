import type { Agent } from 'node:http'
import PQueue from 'p-queue'
import { TransportError } from 'zapgate'
import type {
  GroupInfo,
  GroupJoinRequest,
  GroupRef,
  LinkChallenge,
  LinkRequest,
  ReceivedMedia,
  MediaRef,
  MessageRef,
  OutgoingMessage,
  SentMessage,
  SessionStatus,
  Transport,
  TransportContext,
} from 'zapgate'
import { importOptional, KeyedLock, requireInstalled } from 'zapgate/adapter-kit'
import { AddressResolver } from './addresses.ts'
import { deleteByPrefix, loadAuthState, storedPhone } from './auth-state.ts'
import { toTransportError, withTimeout } from './errors.ts'
import { groupCreate, groupInfo, groupJoin, type GroupDeps } from './groups.ts'
import { baileysLogger, type BaileysLogger } from './logger.ts'
import { downloadThroughAgent, streamMedia } from './media-download.ts'
import { MessageStore } from './message-store.ts'
import { resolveOptions, type BaileysTransportOptions, type ResolvedOptions } from './options.ts'
import { ProxyAgents } from './proxy.ts'
import { checkReachability } from './reachability.ts'
import { receiveUpsert } from './receive.ts'
import { quietSignalLogs } from './signal-logs.ts'
import { markRead, sendOutgoing } from './send.ts'
import { DeviceSession } from './session/session.ts'
import { withSharedAsyncContext } from './shared-async-context.ts'
import type { BaileysModule, MediaDownloader, SocketFactory, SocketLike } from './types.ts'
import { linkRequest } from './validate.ts'
import { defaultVersionResolver, VersionSource } from './version.ts'

/** The optional peer package this transport runs on, and the version it is built for. */
const BAILEYS = '@whiskeysockets/baileys'
const BAILEYS_RANGE = '7.0.0-rc14'

/**
 * The Transport over WhatsApp through Baileys: one DeviceSession (socket lifecycle and connection
 * policy) per device, auth state and message keys in the transport's Storage namespace under
 * `device:<deviceId>:`. Baileys itself (an optional peer package) is imported on first use; creating
 * the transport without it installed fails at once, naming the package to install.
 */
export class BaileysTransport implements Transport {
  private readonly options: ResolvedOptions
  private readonly sessions = new Map<string, DeviceSession>()
  private readonly lock = new KeyedLock()
  private readonly resolver = new AddressResolver()
  private readonly proxies = new ProxyAgents()
  private context?: TransportContext
  private loaded?: Promise<Loaded>
  /** Releases this transport's hold on the libsignal console filter (set while started with quietSignalLogs). */
  private releaseSignalLogs?: () => void

  constructor(options: BaileysTransportOptions = {}) {
    requireInstalled(BAILEYS, 'The Baileys transport', { range: BAILEYS_RANGE, resolve: import.meta.resolve })
    this.options = resolveOptions(options)
  }

  async start(context: TransportContext): Promise<void> {
    this.context = context
    if (this.options.quietSignalLogs) {
      this.releaseSignalLogs?.()
      this.releaseSignalLogs = quietSignalLogs(context.logger)
    }
    if (this.options.checkReachability) void checkReachability(this.options, this.proxies, context.logger)
  }

  async connect(deviceId: string): Promise<void> {
    await this.lock.run(deviceId, async () => (await this.session(deviceId)).resume())
  }

  async link(deviceId: string, request: LinkRequest): Promise<LinkChallenge> {
    const normalized = linkRequest(request)
    const { challenge } = await this.lock.run(deviceId, async () => (await this.session(deviceId)).beginLink(normalized))
    return challenge
  }

  async status(deviceId: string): Promise<SessionStatus> {
    const known = this.statusNow(deviceId)
    if (known) return known
    const phone = this.context ? await storedPhone(this.context.storage, authPrefix(deviceId)).catch(() => undefined) : undefined
    return { state: 'closed', connected: false, ...(phone ? { phone } : {}) }
  }

  statusNow(deviceId: string): SessionStatus | undefined {
    return this.sessions.get(deviceId)?.status()
  }

  async logout(deviceId: string, signal?: AbortSignal): Promise<void> {
    const context = this.ctx()
    await this.lock.run(deviceId, async () => {
      if (signal?.aborted) throw new TransportError('timeout', 'the logout was given up before it started: nothing was unlinked or deleted')
      const held = this.sessions.get(deviceId)
      // A linked device with no session here is opened (as connect does) to unlink it on WhatsApp's side; on failure it is closed and forgotten again.
      const paired = !held && (await storedPhone(context.storage, authPrefix(deviceId))) !== undefined
      const session = held ?? (paired ? await this.session(deviceId) : undefined)
      try {
        if (paired) await session!.resume()
        await session?.logout(signal)
      } catch (error) {
        if (paired) await session!.disconnect().catch(() => undefined)
        if (paired) this.drop(deviceId)
        throw error
      }
      const removed = await deleteByPrefix(context.storage, devicePrefix(deviceId))
      this.drop(deviceId)
      if (!session && removed > 0) await context.emit({ type: 'status', deviceId, status: { state: 'closed', connected: false, reason: 'logged out' } })
    })
  }

  /** Close the session without unlinking, and forget it: another instance may take the device over (and delete it); connect() makes it anew from the store. */
  async disconnect(deviceId: string): Promise<void> {
    await this.lock.run(deviceId, async () => {
      await this.sessions.get(deviceId)?.disconnect()
      this.drop(deviceId)
    })
  }

  async send(deviceId: string, to: string, message: OutgoingMessage): Promise<SentMessage> {
    const { session, socket } = this.open(deviceId)
    const { lib } = await this.load()
    const { buttonsFallback, sendTimeoutMs: timeoutMs, ffmpegPath } = this.options
    const logger = this.ctx().logger
    const stalled = (stuck: SocketLike) => this.lock.run(deviceId, () => session.restartStalled(stuck))
    return sendOutgoing(
      { lib, session, socket, messages: session.memory.messages, resolver: this.resolver, buttonsFallback, timeoutMs, ffmpegPath, logger, stalled },
      to,
      message,
    )
  }

  async markRead(deviceId: string, target: MessageRef): Promise<void> {
    const { session, socket } = this.open(deviceId)
    await markRead({ socket, messages: session.memory.messages, timeoutMs: this.options.sendTimeoutMs }, target)
  }

  async groupInfo(deviceId: string, group: GroupRef): Promise<GroupInfo | undefined> {
    return groupInfo(this.groupDeps(deviceId), group)
  }

  async groupCreate(deviceId: string, subject: string, participants: string[]): Promise<GroupInfo> {
    return groupCreate(this.groupDeps(deviceId), subject, participants)
  }

  async groupJoin(deviceId: string, inviteCode: string): Promise<string | GroupJoinRequest | undefined> {
    return groupJoin(this.groupDeps(deviceId), inviteCode)
  }

  /** Close every session; pending media reports and credential writes finish first. */
  async stop(): Promise<void> {
    const sessions = [...this.sessions.values()]
    this.sessions.clear()
    await Promise.all(sessions.map(session => session.shutdown()))
    this.proxies.destroy()
    this.releaseSignalLogs?.()
    this.releaseSignalLogs = undefined
  }

  /**
   * The bytes of a received media message (for media above `inlineMediaMaxBytes`, whose message event
   * carries metadata only): the one `target` names in its scope (MessageStore.message). Undefined when
   * the device does not remember the message or it is not media. With the default downloader the bytes
   * are a stream, decrypted as the file arrives (see streamMedia). A device not run here is read from the store alone (no session made).
   */
  async downloadMedia(deviceId: string, target: MediaRef): Promise<ReceivedMedia | undefined> {
    const { lib, downloadMedia } = await this.load()
    const session = this.sessions.get(deviceId)
    const messages = session?.memory.messages ?? new MessageStore(this.ctx().storage, `${devicePrefix(deviceId)}msg:`, this.options.messageTtlMs, lib)
    const message = await messages.message(target)
    const content = message && lib.normalizeMessageContent(message.message)
    const type = content && lib.getContentType(content)
    const media = type ? (content[type] as { mimetype?: string | null; fileName?: string | null; url?: string | null } | undefined) : undefined
    if (!message || !media || typeof media !== 'object' || !('mimetype' in media || 'url' in media)) return undefined
    try {
      const download = downloadMedia(message, {
        socket: session?.socketIfOpen(),
        logger: this.ctx().logger,
        agent: await this.proxies.forDevice(this.options.proxy, deviceId),
      })
      const data = await withTimeout(download, this.options.sendTimeoutMs, 'media download')
      return { data, mimetype: media.mimetype || 'application/octet-stream', ...(media.fileName ? { fileName: media.fileName } : {}) }
    } catch (error) {
      throw toTransportError(error, 'media download')
    }
  }

  // --- Internal helpers ---

  /** Forget the device's session here: its memory, its signal key cache, its proxy agent (unless another device uses it). */
  private drop(deviceId: string): void {
    this.sessions.get(deviceId)?.memory.forgetAccount()
    this.sessions.delete(deviceId)
    this.proxies.release(deviceId)
  }

  private ctx(): TransportContext {
    if (!this.context) throw new TransportError('failed', 'the Baileys transport has not been started')
    return this.context
  }

  private open(deviceId: string): { session: DeviceSession; socket: SocketLike } {
    const session = this.sessions.get(deviceId)
    if (!session) throw new TransportError('not-connected', 'the device is not connected')
    return { session, socket: session.requireOpen() }
  }

  private groupDeps(deviceId: string): GroupDeps {
    const { session, socket } = this.open(deviceId)
    return { session, socket, resolver: this.resolver, timeoutMs: this.options.sendTimeoutMs }
  }

  /** The device's session, created (with its stored auth state) on first use. Call under the device lock. */
  private async session(deviceId: string): Promise<DeviceSession> {
    const existing = this.sessions.get(deviceId)
    if (existing) return existing
    const context = this.ctx()
    const { lib, factory, version, logger: baileysLog, downloadMedia } = await this.load()
    const logger = context.logger
    const agent = await this.proxies.forDevice(this.options.proxy, deviceId, { hold: true })
    const auth = await loadAuthState(context.storage, authPrefix(deviceId), lib)
    const messages = new MessageStore(context.storage, `${devicePrefix(deviceId)}msg:`, this.options.messageTtlMs, lib)
    const receive = {
      deviceId,
      lib,
      messages,
      downloadMedia,
      inlineMediaMaxBytes: this.options.inlineMediaMaxBytes,
      downloadTimeoutMs: this.options.sendTimeoutMs,
      downloads: new PQueue({ concurrency: 4 }),
      agent,
      logger,
      emit: context.emit,
    }
    const session: DeviceSession = new DeviceSession({
      deviceId,
      lib,
      options: this.options,
      factory,
      auth,
      messages,
      version,
      logger,
      baileysLogger: baileysLog,
      agent,
      emit: context.emit,
      onUpsert: (socket, upsert) => receiveUpsert(receive, session, socket, upsert),
    })
    this.sessions.set(deviceId, session)
    return session
  }

  /** Import Baileys (once) and fill in the defaults that need it. */
  private load(): Promise<Loaded> {
    this.loaded ??= (async () => {
      const lib: BaileysModule = await importOptional(BAILEYS, 'The Baileys transport', () => import('@whiskeysockets/baileys'), BAILEYS_RANGE)
      const logger = baileysLogger(this.ctx().logger, this.options.baileysLogLevel)
      const factory: SocketFactory = this.options.socketFactory ?? (config => withSharedAsyncContext(() => lib.makeWASocket(config)) satisfies SocketLike)
      const custom = this.options.resolveVersion
      const version = new VersionSource(custom ? () => custom() : defaultVersionResolver(this.ctx().logger))
      const { sendTimeoutMs: timeoutMs, mediaHosts } = this.options
      // The adapter's own download, from media hosts only, MAC checked: media to inline is read whole within its bound;
      // media for GET /media/:token is a stream (Baileys' own stream checks no MAC and never fails when its connection does).
      const downloadMedia: MediaDownloader =
        this.options.downloadMedia ??
        ((message, { socket, agent = this.options.socketConfig.fetchAgent as Agent | undefined, maxBytes }) => {
          const deps = { lib, agent, socket, timeoutMs, maxBytes, mediaHosts }
          return maxBytes !== undefined ? downloadThroughAgent(message, deps) : streamMedia(message, deps)
        })
      return { lib, logger, factory, version, downloadMedia }
    })()
    this.loaded.catch(() => (this.loaded = undefined))
    return this.loaded
  }
}

// --- Internal helpers ---

interface Loaded {
  lib: BaileysModule
  logger: BaileysLogger
  factory: SocketFactory
  version: VersionSource
  downloadMedia: MediaDownloader
}

function devicePrefix(deviceId: string): string {
  return `device:${encodeURIComponent(deviceId)}:`
}

function authPrefix(deviceId: string): string {
  return `${devicePrefix(deviceId)}auth:`
}
