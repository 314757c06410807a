import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Keyv from 'keyv'
import KeyvSqlite from '@keyv/sqlite'
import type { Storage } from '../../src/ports/storage.ts'

/**
 * A Storage over Keyv and SQLite in a temporary file, for tests that need a real serialising store
 * (the project's Keyv adapter lives on another branch). `close()` disconnects and deletes the file.
 */
export function sqliteStorage(): Storage & { close(): Promise<void>; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'zapgate-sqlite-'))
  const path = join(dir, 'store.sqlite')
  const keyv = new Keyv({ store: new KeyvSqlite(`sqlite://${path}`) })
  return {
    path,
    async get<T>(key: string) {
      return (await keyv.get(key)) as T | undefined
    },
    async set(key, value, ttlMs) {
      if (!(await keyv.set(key, value, ttlMs))) throw new Error(`could not store ${key}`)
    },
    async delete(key) {
      return keyv.delete(key)
    },
    async *list<T>(prefix: string): AsyncIterable<[string, T]> {
      const iterator = keyv.iterator?.(undefined)
      if (!iterator) throw new Error('this Keyv store cannot list')
      for await (const [key, value] of iterator as AsyncGenerator<[string, T]>) if (key.startsWith(prefix)) yield [key, value]
    },
    async close() {
      await keyv.disconnect()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
