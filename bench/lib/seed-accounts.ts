import { hash, randomBytes, randomUUID } from 'node:crypto'
import sqlite3 from 'sqlite3'
import type { Account } from '../../src/domain/accounts.ts'

/** Where the gateway's SQLite store keeps its records (storageFromUrl's defaults). */
export interface SqliteStore {
  file: string
  /** Keyv namespace (default "zapgate"): keys are `<namespace>:<collection>:<id>`. */
  namespace?: string
  /** @keyv/sqlite's table (default "keyv"). */
  table?: string
}

/** Rows per INSERT statement (2 bound values each: well under SQLite's limit on bound values). */
const ROWS_PER_INSERT = 500

/**
 * Insert `count` accounts straight into the SQLite file of a stopped gateway, in one transaction:
 * for each, the records src/domain/accounts.ts writes on registration (the account, its authkey
 * index and its e-mail index), with random ids, keys and password hashes. They only make the store
 * big; the first one's authkey and e-mail are answered, to check that the gateway reads them. Values
 * are stored as Keyv stores them (`{"value": ...}`, plain JSON).
 */
export async function seedAccounts(store: SqliteStore, count: number): Promise<{ authkey: string; email: string } | undefined> {
  const prefix = `${store.namespace ?? 'zapgate'}:`
  const rows: [string, string][] = []
  let sample: { authkey: string; email: string } | undefined
  const expiresOn = new Date(Date.now() + 365 * 86_400_000).toISOString().slice(0, 10)
  for (let i = 0; i < count; i++) {
    const id = randomUUID()
    const email = `seed-${id}@example.com`
    const authkey = randomBytes(24).toString('base64url')
    sample ??= { authkey, email }
    const account: Account = {
      id,
      name: `Seed ${i}`,
      email,
      phone: `5511${String(900_000_000 + i)}`,
      planId: '1',
      planName: 'Gratuito',
      expiresOn,
      passwordHash: `scrypt$16384$8$1$${randomBytes(16).toString('base64')}$${randomBytes(32).toString('base64')}`,
      authkeyHash: sha256(authkey),
      createdAt: Date.now(),
    }
    rows.push([`${prefix}account:${id}`, JSON.stringify({ value: account })])
    rows.push([`${prefix}authkey:${account.authkeyHash}`, JSON.stringify({ value: { accountId: id } })])
    rows.push([`${prefix}account-email:${sha256(email)}`, JSON.stringify({ value: { accountId: id } })])
  }

  const db = await open(store.file)
  try {
    await run(db, 'BEGIN')
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
      const batch = rows.slice(i, i + ROWS_PER_INSERT)
      await run(db, `INSERT INTO ${store.table ?? 'keyv'} (key, value) VALUES ${batch.map(() => '(?, ?)').join(', ')}`, batch.flat())
    }
    await run(db, 'COMMIT')
    return sample
  } finally {
    await new Promise<void>((resolve, reject) => db.close(error => (error ? reject(error) : resolve())))
  }
}

/** Rows in the store's table whose key starts with `<namespace>:<collection>:`. */
export async function countRecords(store: SqliteStore, collection: string): Promise<number> {
  const db = await open(store.file)
  try {
    const from = `${store.namespace ?? 'zapgate'}:${collection}:`
    const row = await new Promise<{ n: number }>((resolve, reject) =>
      db.get(`SELECT count(*) AS n FROM ${store.table ?? 'keyv'} WHERE key >= ? AND key < ?`, [from, `${from.slice(0, -1)};`], (error, found: { n: number }) =>
        error ? reject(error) : resolve(found),
      ),
    )
    return row.n
  } finally {
    await new Promise<void>(resolve => db.close(() => resolve()))
  }
}

// --- Internal helpers ---

function sha256(text: string): string {
  return hash('sha256', text, 'hex')
}

function open(file: string): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, error => (error ? reject(error) : resolve(db)))
  })
}

function run(db: sqlite3.Database, sql: string, params: unknown[] = []): Promise<void> {
  return new Promise((resolve, reject) => db.run(sql, params, error => (error ? reject(error) : resolve())))
}
