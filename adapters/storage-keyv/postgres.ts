import { createRequire } from 'node:module'
import type { KeyvPostgres, KeyvPostgresOptions } from '@keyv/postgres'

/** The part of pg's Pool used here. */
interface Pool {
  query(sql: string, values?: unknown[]): Promise<{ rows: any[] }>
  end(): Promise<void>
  on(event: 'error', listener: (error: Error) => void): unknown
  on(event: 'connect' | 'remove', listener: (client: PoolClient) => void): unknown
}

/** A pooled pg client; `connection.stream` is its socket (pg's, not a documented field). */
interface PoolClient {
  connection?: { stream?: { destroy(): void } }
  once(event: 'end', listener: () => void): unknown
}

/**
 * A KeyvPostgres with a connection pool of its own. KeyvPostgres itself keeps one module-level pool
 * (for the last URI opened) and its disconnect ends that pool, whichever store it served: two
 * storages in one process would share it, and closing one would break the other. This overrides
 * its public connect() and disconnect() (same pg, the one @keyv/postgres depends on; same pool
 * options: KeyvPostgres hands all its options to pg.Pool too), so each storage opens and ends its own.
 * Ending the pool waits for the queries under way, and for the connections being opened; a server that
 * stopped answering (or one that takes the connection and never speaks) would hold it for ever: past
 * `closeGraceMs` the connections still open, or still opening, are dropped (their queries fail).
 */
export function pooledPostgres(Base: typeof KeyvPostgres, options: KeyvPostgresOptions, closeGraceMs: number): KeyvPostgres {
  const { Pool, Client } = pgOf()
  const pools = new WeakMap<object, { pool: Pool; open: Set<PoolClient> }>()
  class PooledPostgres extends Base {
    // Called by the KeyvPostgres constructor, before this class's fields exist: the pool is kept in a WeakMap.
    override async connect() {
      // Each client is known from its creation (the pool's `connect` event comes only once it is connected): a connection
      // that never gets an answer to its start-up would otherwise be out of reach of the drop below.
      const open = new Set<PoolClient>()
      class TrackedClient extends Client {
        constructor(config: object) {
          super(config)
          open.add(this)
          this.once('end', () => open.delete(this))
        }
      }
      const pool = new Pool({ connectionString: this.opts.uri, ...this.opts, Client: TrackedClient })
      // An idle connection that breaks (server restart) is dropped by the pool; without a listener
      // its error event would end the process.
      pool.on('error', () => {})
      pool.on('remove', client => open.delete(client))
      pools.set(this, { pool, open })
      return async (sql: string, values?: unknown[]) => (await pool.query(sql, values)).rows
    }

    override async disconnect() {
      const { pool, open } = pools.get(this) ?? {}
      pools.delete(this)
      if (!pool) return
      const drop = setTimeout(() => {
        for (const client of open!) client.connection?.stream?.destroy()
      }, closeGraceMs)
      await pool.end().finally(() => clearTimeout(drop))
    }
  }
  return new PooledPostgres(options)
}

// --- Internal helpers ---

/** pg, resolved from @keyv/postgres (its dependency), so no separate install is needed. */
function pgOf(): { Pool: new (config: object) => Pool; Client: new (config: object) => PoolClient } {
  const require = createRequire(import.meta.url)
  return createRequire(require.resolve('@keyv/postgres'))('pg')
}
