/**
 * Warn when Redis may evict the gateway's keys to make room: with a `maxmemory` and a policy other
 * than `noeviction`, a full Redis drops keys with a ttl (`volatile-*`: rate counters, instance
 * heartbeats, whereupon a live instance is taken for gone and its devices get a second holder, OTP
 * codes) or any key (`allkeys-*`: accounts and devices too). Managed Redis services often default to
 * `volatile-lru`. Read from `INFO memory` (managed services may refuse CONFIG); a Redis that will
 * not tell is not warned about.
 */
export async function warnOfEviction(
  store: { getClient(): Promise<unknown> },
  onWarning: ((message: string) => void) | undefined,
  timeoutMs = 5000,
): Promise<void> {
  if (!onWarning) return
  let timer: NodeJS.Timeout | undefined
  // An unreachable Redis: getClient() waits on a client that keeps reconnecting and never settles (the start hung for good); the ping that follows says why.
  const gaveUp = new Promise<string>(resolve => (timer = setTimeout(() => resolve(''), timeoutMs)))
  const read = store
    .getClient()
    .then(client => (client as { info(section: string): Promise<string> }).info('memory'))
    .catch(() => '') // not connected: the ping that follows says so
  const info = await Promise.race([read, gaveUp]).finally(() => clearTimeout(timer))
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1]
  const limit = Number(/^maxmemory:(\d+)/m.exec(info)?.[1] ?? 0)
  if (!policy || policy === 'noeviction' || limit === 0) return
  onWarning(
    `Redis may evict the gateway's keys when it reaches maxmemory (${limit} bytes, maxmemory-policy ${policy}): rate limits, instance heartbeats, OTP codes${policy.startsWith('allkeys') ? ', accounts and devices' : ''} can be lost. Set maxmemory-policy noeviction (docs/limits.md).`,
  )
}
