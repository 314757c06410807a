import type { Accounts } from './domain/accounts.ts'
import type { Agents } from './domain/agents.ts'
import type { Devices } from './domain/devices.ts'
import type { FlowConversations } from './domain/flows.ts'
import type { MessageFeed } from './domain/message-feed.ts'
import type { MediaLinks } from './domain/media-links.ts'
import type { Messaging } from './domain/messaging/index.ts'
import type { ShareLinks } from './domain/share-links.ts'
import type { GatewayEvents } from './events.ts'
import type { Logger } from './logger.ts'
import type { MediaFetcher } from './ports/media.ts'
import type { Storage } from './ports/storage.ts'
import type { Transport } from './ports/transport.ts'
import type { WebhookSender } from './ports/webhooks.ts'
import type { KeyedLock } from './store/keyed-lock.ts'
import type { ResolvedOptions } from './options.ts'
import type { RateLimits } from './security/rate-limits.ts'

/** The gateway's wired domain services, handed to every operation handler. */
export interface Services {
  options: ResolvedOptions
  logger: Logger
  storage: Storage
  lock: KeyedLock
  transport: Transport
  webhooks: WebhookSender
  media: MediaFetcher
  events: GatewayEvents
  accounts: Accounts
  devices: Devices
  agents: Agents
  links: ShareLinks
  /** Every message devices see (received, and the gateway's own sends). */
  feed: MessageFeed
  /** Signed links to received media too large to inline. */
  mediaLinks: MediaLinks
  /** Agents' conversations per contact (operation 19 deletes them). */
  flows: FlowConversations
  /** Sending (per-device queues), media, schedules, OTP and groups. */
  messaging: Messaging
  /** Request limits (per account key, failed authkeys and registrations per IP, OTP verifications). */
  rateLimits: RateLimits
}
