import type { Agent } from 'node:http'
import type { BaileysEventMap } from '@whiskeysockets/baileys'
import type { Logger, TransportEvent } from 'zapgate'
import type { StoredAuthState } from '../auth-state.ts'
import type { BaileysLogger } from '../logger.ts'
import type { MessageStore } from '../message-store.ts'
import type { ResolvedOptions } from '../options.ts'
import type { BaileysModule, SocketFactory, SocketLike } from '../types.ts'
import type { VersionSource } from '../version.ts'

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
  /** The device's proxy agent (for the socket, media and the version lookup), when it has a proxy. */
  agent?: Agent
  /** Report an event to the gateway (resolves once recorded). */
  emit(event: TransportEvent): Promise<void>
  /** Handle one messages.upsert of this session's socket; calls are made one at a time, in order. */
  onUpsert(socket: SocketLike, upsert: BaileysEventMap['messages.upsert']): Promise<void>
  /** Source of randomness for the back-off jitter. */
  random?: () => number
}
