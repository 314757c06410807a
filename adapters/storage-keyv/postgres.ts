import { createRequire } from 'node:module'
import type { KeyvPostgres, KeyvPostgresOptions } from '@keyv/postgres'

/** The part of pg's Pool used here. */
interface Pool {
  query(sql: string, values?: unknown[]): Promise<{ rows: any[] }>
  end(): Promise<void>
  on(event: 'error', listener: (error: Error) => void): unknown
}

/**
 * A KeyvPostgres with a connection pool of its own. KeyvPostgres itself keeps one module-level pool
 * (for the last URI opened) and its disconnect ends that pool, whichever store it served: two
 * storages in one process would share it, and closing one would break the other. This overrides
 * its public connect() and disconnect() (same pg, the one @keyv/postgres depends on; same pool
 * options: KeyvPostgres hands all its options to pg.Pool too), so each storage opens and ends its own.
 */
export function pooledPostgres(Base: typeof KeyvPostgres, options: KeyvPostgresOptions): KeyvPostgres {
  const { Pool } = pgOf()
  const pools = new WeakMap<object, Pool>()
  class PooledPostgres extends Base {
    // Called by the KeyvPostgres constructor, before this class's fields exist: the pool is kept in a WeakMap.
    override async connect() {
      const pool = new Pool({ connectionString: this.opts.uri, ...this.opts })
      // An idle connection that breaks (server restart) is dropped by the pool; without a listener
      // its error event would end the process.
      pool.on('error', () => {})
      pools.set(this, pool)
      return async (sql: string, values?: unknown[]) => (await pool.query(sql, values)).rows
    }

    override async disconnect() {
      const pool = pools.get(this)
      pools.delete(this)
      await pool?.end()
    }
  }
  return new PooledPostgres(options)
}

// --- Internal helpers ---

/** pg, resolved from @keyv/postgres (its dependency), so no separate install is needed. */
function pgOf(): { Pool: new (config: object) => Pool } {
  const require = createRequire(import.meta.url)
  return createRequire(require.resolve('@keyv/postgres'))('pg')
}
