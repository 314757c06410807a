import { storageFromUrl } from 'zapgate/adapters/storage-keyv'

/** The PostgreSQL of the benchmarks: POSTGRES_URL, or the local test database. */
export const postgresUrl = process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** Delete every key under `namespace` of a Redis or PostgreSQL store (what a benchmark's gateways left there). */
export async function clearStore(url: string, namespace: string): Promise<void> {
  const storage = await storageFromUrl(url, { namespace })
  try {
    const keys: string[] = []
    for await (const [key] of storage.list('')) keys.push(key)
    for (const key of keys) await storage.delete(key)
  } finally {
    await storage.close?.()
  }
}
