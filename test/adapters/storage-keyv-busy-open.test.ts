import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import KeyvSqlite from '@keyv/sqlite'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'

const busy = suite('storage-keyv: opening a SQLite file another process keeps busy')

// Seen in CI: one of three processes opening a shared SQLite file while the others hammered it
// exited with 'Cannot open the store … SQLITE_BUSY: database is locked' (the driver's busy timeout is 5 s).
busy('storageFromUrl waits for a lock held past the driver busy timeout instead of failing to start', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'zapgate-busy-'))
  const url = `sqlite://${join(dir, 'shared.sqlite')}`
  const holder = new KeyvSqlite({ uri: url })
  try {
    await holder.query('BEGIN EXCLUSIVE')
    await holder.query('CREATE TABLE other(x)')
    const released = new Promise<number>(resolve => setTimeout(() => void holder.query('COMMIT').then(() => resolve(Date.now())), 6_500))
    const storage = await storageFromUrl(url)
    const opened = Date.now()
    assert.ok(opened >= (await released), 'opened once the lock was let go')
    await storage.set('k', { v: 1 })
    assert.equal(await storage.get('k'), { v: 1 })
    await storage.close?.()
  } finally {
    await holder.disconnect?.().catch(() => {})
    rmSync(dir, { recursive: true, force: true })
  }
})

busy.run()
