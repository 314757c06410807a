import type { BaileysEventMap, CacheStore, ConnectionState, GroupMetadata, UserFacingSocketConfig, WAVersion } from '@whiskeysockets/baileys'
import type { TransportEvent } from 'zapgate'
import type { Logger } from 'zapgate'
import type { StoredAuthState } from './auth-state.ts'
import type { BaileysLogger } from './logger.ts'
import type { MessageStore } from './message-store.ts'
import type { ResolvedOptions } from './options.ts'
import type { DeviceSession } from './session.ts'
import type { BaileysModule, SocketFactory, SocketInfo, SocketLike } from './types.ts'
import type { VersionSource } from './version.ts'

/** What a device session needs from the transport. */
export interface SessionDeps {
  deviceId: string
  lib: BaileysModule
  options: ResolvedOptions
  factory: SocketFactory
  auth: StoredAuthState
  messages: MessageStore
  version: VersionSource
  logger: Logger
  baileysLogger: BaileysLogger
  /** Report an event to the gateway (resolves once recorded). */
  emit(event: TransportEvent): Promise<void>
  /** Handle one messages.upsert of this session's socket; calls are made one at a time, in order. */
  onUpsert(session: DeviceSession, socket: SocketLike, upsert: BaileysEventMap['messages.upsert']): Promise<void>
  /** Source of randomness for the back-off jitter. */
  random?: () => number
}

/** What a device's socket config is made of. */
export interface SocketConfigInput {
  lib: BaileysModule
  options: ResolvedOptions
  auth: StoredAuthState
  logger: BaileysLogger
  keyCache: CacheStore
  messages: MessageStore
  groups: { get(jid: string): GroupMetadata | undefined }
  version: WAVersion | undefined
}

/**
 * The Baileys config of one device socket. Baileys spreads it over its defaults, so a key set to
 * undefined would override a default (and `version: undefined` crashes): undefined values are left out.
 * The phone keeps its notifications (not marked online), no full history sync, no echo of own sends.
 */
export function socketConfig(input: SocketConfigInput): UserFacingSocketConfig {
  const { lib, options, auth, logger, keyCache, messages, groups, version } = input
  const extra = Object.fromEntries(Object.entries(options.socketConfig).filter(([, value]) => value !== undefined))
  return {
    markOnlineOnConnect: false,
    syncFullHistory: false,
    ...extra,
    auth: { creds: auth.state.creds, keys: lib.makeCacheableSignalKeyStore(auth.state.keys, logger, keyCache) },
    logger,
    browser: options.browser ?? lib.Browsers.ubuntu('Chrome'),
    emitOwnEvents: false,
    getMessage: async key => (key.id ? messages.content(key.id) : undefined),
    cachedGroupMetadata: async jid => groups.get(jid),
    ...(version ? { version } : {}),
  }
}

/** What a session does with a socket's events. */
export interface SocketHandlers {
  connection(update: Partial<ConnectionState>): void
  creds(): void
  messages(upsert: BaileysEventMap['messages.upsert']): void
  /** A group's metadata changed (subject, settings or participants). */
  groupChanged(jid: string): void
}

/** Attach the handlers to a socket's events; returns the function that detaches them again. */
export function attachHandlers(socket: SocketLike, handlers: SocketHandlers): () => void {
  const onUpdate = (update: Partial<ConnectionState>) => handlers.connection(update)
  const onCreds = () => handlers.creds()
  const onUpsert = (upsert: BaileysEventMap['messages.upsert']) => handlers.messages(upsert)
  const onGroups = (updates: { id?: string | null }[]) => updates.forEach(u => u.id && handlers.groupChanged(u.id))
  const onParticipants = (update: { id: string }) => handlers.groupChanged(update.id)
  socket.ev.on('connection.update', onUpdate)
  socket.ev.on('creds.update', onCreds)
  socket.ev.on('messages.upsert', onUpsert)
  socket.ev.on('groups.update', onGroups)
  socket.ev.on('group-participants.update', onParticipants)
  return () => {
    socket.ev.off('connection.update', onUpdate)
    socket.ev.off('creds.update', onCreds)
    socket.ev.off('messages.upsert', onUpsert)
    socket.ev.off('groups.update', onGroups)
    socket.ev.off('group-participants.update', onParticipants)
  }
}

/** Call the factory, synchronously when it answers synchronously, so that no event can slip past the listeners. */
export async function createSocket(factory: SocketFactory, config: UserFacingSocketConfig, info: SocketInfo): Promise<SocketLike> {
  const made = factory(config, info)
  return typeof (made as { then?: unknown }).then === 'function' ? await made : (made as SocketLike)
}
