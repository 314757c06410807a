import type { Agent } from 'node:http'
import type { BaileysEventMap, CacheStore, ConnectionState, GroupMetadata, SocketConfig, UserFacingSocketConfig, WAVersion } from '@whiskeysockets/baileys'
import type { StoredAuthState } from '../auth-state.ts'
import { InteractiveResends, RetryCounts } from '../interactive-retry.ts'
import type { BaileysLogger } from '../logger.ts'
import type { MessageStore } from '../message-store.ts'
import type { ResolvedOptions } from '../options.ts'
import type { BaileysModule, SocketFactory, SocketInfo, SocketLike } from '../types.ts'

/** What a device's socket config is made of. */
interface SocketConfigInput {
  lib: BaileysModule
  options: ResolvedOptions
  auth: StoredAuthState
  logger: BaileysLogger
  keyCache: CacheStore
  messages: MessageStore
  /** Baileys' cachedGroupMetadata: the cached metadata, else a first fetch that is then cached. */
  groupMetadata(jid: string): Promise<GroupMetadata | undefined>
  version: WAVersion | undefined
  agent?: Agent
}

/**
 * The Baileys config of one device socket. Baileys spreads it over its defaults, so a key set to
 * undefined would override a default (and `version: undefined` crashes): undefined values are left out.
 * The phone keeps its notifications (not marked online), no full history sync, no echo of own sends;
 * statuses, broadcast lists and channels are ignored by Baileys itself (acked, never decrypted); a
 * proxy agent carries the WebSocket (`agent`) and media uploads (`fetchAgent`). getMessage answers
 * Baileys' retries from the message store, interactive messages excepted (interactive-retry.ts: sent
 * again with their `<biz>` node once createSocket attached the socket, counted in the socket's
 * msgRetryCounterCache, which is therefore always one the adapter holds).
 */
export function socketConfig(input: SocketConfigInput): UserFacingSocketConfig {
  const { lib, options, auth, logger, keyCache, messages, version, agent } = input
  const extra = Object.fromEntries(Object.entries(options.socketConfig).filter(([, value]) => value !== undefined))
  // Baileys' retry counts where the adapter reads them too (an application's own cache, else one of this socket).
  const counts = options.socketConfig.msgRetryCounterCache ?? new RetryCounts()
  const maxMsgRetryCount = options.socketConfig.maxMsgRetryCount ?? lib.DEFAULT_CONNECTION_CONFIG.maxMsgRetryCount
  const resends = new InteractiveResends(lib, logger, { counts, maxMsgRetryCount })
  const config: UserFacingSocketConfig = {
    markOnlineOnConnect: false,
    syncFullHistory: false,
    ...extra,
    msgRetryCounterCache: counts,
    ...(agent ? { agent: agent as SocketConfig['agent'], fetchAgent: agent as SocketConfig['fetchAgent'] } : {}),
    // A retired socket's late commit is dropped outside the cache, which the next socket shares.
    auth: { creds: auth.state.creds, keys: auth.socketKeys(lib.makeCacheableSignalKeyStore(auth.state.keys, logger, keyCache)) },
    logger,
    browser: options.browser ?? lib.Browsers.ubuntu('Chrome'),
    emitOwnEvents: false,
    shouldIgnoreJid: jid => lib.isJidBroadcast(jid) || lib.isJidNewsletter(jid),
    getMessage: async key => resends.answer(key, key.id ? await messages.content(key) : undefined),
    cachedGroupMetadata: jid => input.groupMetadata(jid),
    ...(version ? { version } : {}),
  }
  resendsOf.set(config, resends)
  return config
}

/** The interactive resends of each config socketConfig made, attached to its socket by createSocket. */
const resendsOf = new WeakMap<UserFacingSocketConfig, InteractiveResends>()

/** What a session does with a socket's events. */
interface SocketHandlers {
  connection(update: Partial<ConnectionState>): void
  creds(): void
  messages(upsert: BaileysEventMap['messages.upsert']): void
  /** Status changes of messages (the adapter reports the delivery failures among them). */
  messageUpdates(updates: BaileysEventMap['messages.update']): void
  /** Groups joined or created (full metadata). */
  groupsUpserted(groups: GroupMetadata[]): void
  /** Group subject or settings changed (partial metadata). */
  groupsUpdated(updates: Partial<GroupMetadata>[]): void
  /** Participants added, removed, promoted or demoted. */
  participantsChanged(event: BaileysEventMap['group-participants.update']): void
}

/**
 * Attach the handlers to a socket's events; returns the function that detaches them again. Baileys
 * buffers its events from a login until the offline backlog is in, having sent each message's receipt
 * (WhatsApp never delivers it again), and its end() destroys that buffer: the buffer is flushed to the
 * handlers when the socket reports its close (before Baileys destroys it) and when they are detached.
 */
export function attachHandlers(socket: SocketLike, handlers: SocketHandlers): () => void {
  const flush = () => void socket.ev.flush?.()
  const listeners: { [E in keyof BaileysEventMap]?: (arg: BaileysEventMap[E]) => void } = {
    'connection.update': update => {
      if (update.connection === 'close') flush()
      handlers.connection(update)
    },
    'creds.update': () => handlers.creds(),
    'messages.upsert': upsert => handlers.messages(upsert),
    'messages.update': updates => handlers.messageUpdates(updates),
    'groups.upsert': groups => handlers.groupsUpserted(groups),
    'groups.update': updates => handlers.groupsUpdated(updates),
    'group-participants.update': event => handlers.participantsChanged(event),
  }
  const entries = Object.entries(listeners) as [keyof BaileysEventMap, (arg: unknown) => void][]
  for (const [event, listener] of entries) socket.ev.on(event, listener)
  return () => {
    flush()
    for (const [event, listener] of entries) socket.ev.off(event, listener)
  }
}

/** Call the factory, synchronously when it answers synchronously, so that no event can slip past the listeners. */
export async function createSocket(factory: SocketFactory, config: UserFacingSocketConfig, info: SocketInfo): Promise<SocketLike> {
  const made = factory(config, info)
  const socket = typeof (made as { then?: unknown }).then === 'function' ? await made : (made as SocketLike)
  resendsOf.get(config)?.attach(socket)
  return socket
}
