import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import type { Storage } from '../../src/ports/storage.ts'
import { memoryStorage } from './memory-storage.ts'
import { POSTGRES, REDIS, type Service } from './requires.ts'

/** Two Storage objects on one backend (two connections), as two processes sharing a store would have. */
export interface SharedBackend {
  name: string
  /** The server it needs (Redis, PostgreSQL); register its tests through `needing(test, service, what)`. */
  service?: Service
  /** Open the two storages; `close` closes both (and removes what the backend keeps on disk). */
  open(): Promise<{ a: Storage; b: Storage; close(): Promise<void> }>
}

/**
 * The backends with atomic steps that these tests can reach: the test Map storage (two views of one
 * Map), SQLite (two connections to one file in a temp dir), Redis and PostgreSQL (REDIS_URL /
 * POSTGRES_URL: their `service`, which `needing` turns into skipped tests when it is missing), each
 * under a namespace of this run's own.
 */
export function sharedBackends(): SharedBackend[] {
  const namespace = `zapgate-test-${randomBytes(4).toString('hex')}`
  const backends: SharedBackend[] = [
    {
      name: 'memory',
      async open() {
        const a = memoryStorage()
        return { a, b: a.connectAgain(), close: async () => {} }
      },
    },
    {
      name: 'sqlite',
      async open() {
        const dir = mkdtempSync(join(tmpdir(), 'zapgate-shared-'))
        const url = `sqlite://${join(dir, 'store.sqlite')}`
        const a = await storageFromUrl(url)
        const b = await storageFromUrl(url)
        return { a, b, close: async () => (await Promise.all([a.close!(), b.close!()]), rmSync(dir, { recursive: true, force: true })) }
      },
    },
  ]
  for (const [name, service] of [
    ['redis', REDIS],
    ['postgres', POSTGRES],
  ] as const) {
    backends.push({
      name,
      service,
      async open() {
        const url = service.value
        if (!url) throw new Error(`${service.name} is missing (${service.how})`)
        const a = await storageFromUrl(url, { namespace })
        const b = await storageFromUrl(url, { namespace })
        const close = async () => {
          // Everything under this run's namespace is this run's: leave the shared server clean.
          for await (const [key] of a.list('')) await a.delete(key)
          await Promise.all([a.close!(), b.close!()])
        }
        return { a, b, close }
      },
    })
  }
  return backends
}

/** `storage` without its atomic steps: a third-party Storage that only works in one process. */
export function withoutAtomicSteps(storage: Storage): Storage {
  return {
    get: key => storage.get(key),
    set: (key, value, ttlMs) => storage.set(key, value, ttlMs),
    delete: key => storage.delete(key),
    list: prefix => storage.list(prefix),
  }
}

/**
 * The stores separate node processes can share, as `[name, url, service]`: one SQLite file (in a temp
 * dir removed when this process exits), Redis and PostgreSQL (undefined url and their `service`, for
 * `needing`, when REDIS_URL / POSTGRES_URL are not set).
 */
export function processStores(prefix: string): Array<[name: string, url: string | undefined, service?: Service]> {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }))
  return [
    ['sqlite (one file)', `sqlite://${join(dir, 'shared.sqlite')}`],
    ['redis', REDIS.value, REDIS],
    ['postgres', POSTGRES.value, POSTGRES],
  ]
}
