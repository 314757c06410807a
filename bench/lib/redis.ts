import KeyvRedis from '@keyv/redis'

/** The Redis of the benchmarks: REDIS_URL, or a local server on the default port. */
export const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

/** A Keyv namespace no other run uses, so a benchmark never touches anyone else's keys. */
export function benchNamespace(name: string): string {
  return `zapgate-bench-${name}-${process.pid}-${Date.now()}`
}

/** Delete every key of `namespace` (as @keyv/redis prefixes them: `<namespace>::<key>`). */
export async function clearNamespace(url: string, namespace: string): Promise<void> {
  const store = new KeyvRedis(url, { namespace, throwOnErrors: true, connectionTimeout: 5000 })
  try {
    await store.clear()
  } finally {
    await store.disconnect()
  }
}
