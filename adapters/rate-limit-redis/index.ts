import { RateLimiterRedis } from 'rate-limiter-flexible'
import type { RateLimitStore } from 'zapgate'

/** Options of redisRateLimitStore: a Redis URL (a client of its own is opened) or a connected node-redis client. */
export type RedisRateLimitOptions = ({ url: string } | { client: RedisLike }) & {
  /** Prefix of the counters' keys, so several gateways or apps can share one Redis. Default `zapgate`. */
  namespace?: string
}

/** The part of a node-redis (v4+) client that rate-limiter-flexible uses. */
export type RedisLike = object

/**
 * A RateLimitStore in Redis (rate-limiter-flexible's RateLimiterRedis, one atomic Lua call per
 * count), so that every gateway process on one Redis shares the same limits. With `url` it opens
 * its own client (through @keyv/redis, the optional package of Redis storage) with the offline queue
 * off: while Redis is down, counts fail at once and the gateway lets requests through (fail open)
 * instead of waiting; `close()` then quits that client.
 */
export async function redisRateLimitStore(options: RedisRateLimitOptions): Promise<RateLimitStore> {
  const namespace = options.namespace ?? 'zapgate'
  let client: RedisLike
  let owned: { close(): Promise<void>; destroy(): void; isReady: boolean } | undefined
  if ('client' in options) {
    client = options.client
  } else {
    const { createClient } = await import('@keyv/redis').catch(cause => {
      throw new Error('redisRateLimitStore({ url }) needs the optional package @keyv/redis: npm install @keyv/redis', { cause })
    })
    const created = createClient({ url: options.url, disableOfflineQueue: true, socket: { reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2000) } })
    created.on('error', () => {}) // reconnects on its own; failed counts are logged by the gateway
    await created.connect()
    client = created
    owned = created
  }
  return {
    limiter: rule => new RateLimiterRedis({ storeClient: client, useRedisPackage: true, ...rule, keyPrefix: `${namespace}:${rule.keyPrefix}` }),
    async close() {
      if (!owned) return
      // A client that is reconnecting would wait for ever to close cleanly: drop it instead.
      if (!owned.isReady) owned.destroy()
      else await owned.close()
    },
  }
}
