import type { Storage } from '../../src/ports/storage.ts'

/**
 * A Map-based Storage for tests that also records every write (key and TTL). Values are stored as
 * JSON, like a real store, so a test sees exactly what survives serialisation; `ttlMs` is honoured on
 * read. `entries` exposes the raw map.
 */
export class RecordingStorage implements Storage {
  /** Raw entries: key to JSON text and expiry. */
  readonly entries = new Map<string, { json: string; expires: number }>()
  /** Every set call, in order (key and ttl), for assertions. */
  readonly writes: { key: string; ttlMs?: number }[] = []

  async get<T = unknown>(key: string): Promise<T | undefined> {
    const entry = this.entries.get(key)
    if (!entry) return undefined
    if (entry.expires <= Date.now()) {
      this.entries.delete(key)
      return undefined
    }
    return JSON.parse(entry.json) as T
  }

  async set(key: string, value: unknown, ttlMs?: number): Promise<void> {
    this.writes.push({ key, ...(ttlMs === undefined ? {} : { ttlMs }) })
    this.entries.set(key, { json: JSON.stringify(value), expires: ttlMs === undefined ? Infinity : Date.now() + ttlMs })
  }

  async delete(key: string): Promise<boolean> {
    return this.entries.delete(key)
  }

  async *list<T = unknown>(prefix: string): AsyncIterable<[string, T]> {
    for (const key of [...this.entries.keys()]) {
      if (!key.startsWith(prefix)) continue
      const value = await this.get<T>(key)
      if (value !== undefined) yield [key, value]
    }
  }

  /** Keys starting with `prefix`, sorted. */
  keys(prefix = ''): string[] {
    return [...this.entries.keys()].filter(k => k.startsWith(prefix)).sort()
  }
}
