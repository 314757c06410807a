import assert from 'node:assert/strict'
import net from 'node:net'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import { missingPackageError, storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { needing, POSTGRES, REDIS } from '../helpers/requires.ts'
import { NODE_TS } from '../helpers/node-ts.ts'

const execFileAsync = promisify(execFile)
const dir = mkdtempSync(join(tmpdir(), 'zapgate-storage-url-'))
process.on('exit', () => rmSync(dir, { recursive: true, force: true }))

const fromUrl = suite('storageFromUrl')

fromUrl('opens an in-memory storage for memory:// and for an empty URL', async () => {
  for (const url of ['memory://', '']) {
    const storage = await storageFromUrl(url)
    await storage.set('a', { ok: true })
    assert.deepEqual(await storage.get('a'), { ok: true })
    await storage.close!()
  }
})

fromUrl('rejects an unknown scheme with a clear error', async () => {
  await assert.rejects(storageFromUrl('mongodb://user:secret@localhost/db'), (error: Error) => {
    assert.match(error.message, /Unsupported store URL scheme "mongodb:"/)
    assert.match(error.message, /sqlite:\/\//)
    assert.doesNotMatch(error.message, /secret/)
    return true
  })
  await assert.rejects(storageFromUrl('not a url'), /Invalid store URL/)
  await assert.rejects(storageFromUrl('sqlite://'), /sqlite:\/\/<file path>/)
})

fromUrl('creates the parent directories of a sqlite file', async () => {
  const path = join(dir, 'nested', 'deeper', 'store.sqlite')
  const storage = await storageFromUrl(`sqlite://${path}`)
  await storage.set('a', 1)
  assert.ok(existsSync(path))
  assert.ok(existsSync(`${path}-wal`), 'the database is in WAL mode')
  await storage.close!()
})

fromUrl('a sqlite file it creates is 0600 (its -wal too), the folders it creates 0700; existing ones keep their modes', async () => {
  const previous = process.umask(0o022)
  try {
    const path = join(dir, 'private', 'inner', 'credentials.sqlite')
    const storage = await storageFromUrl(`sqlite://${path}`)
    await storage.set('transport:session:d1', { secret: 'x' })
    const mode = (file: string) => statSync(file).mode & 0o777
    assert.equal(mode(path).toString(8), '600')
    assert.equal(mode(`${path}-wal`).toString(8), '600')
    assert.equal(mode(join(dir, 'private', 'inner')).toString(8), '700')
    assert.equal(mode(join(dir, 'private')).toString(8), '700')
    await storage.close!()

    const shared = join(dir, 'shared')
    mkdirSync(shared, { mode: 0o755 })
    chmodSync(shared, 0o755)
    writeFileSync(join(shared, 'old.sqlite'), '')
    chmodSync(join(shared, 'old.sqlite'), 0o640)
    const old = await storageFromUrl(`sqlite://${join(shared, 'old.sqlite')}`)
    await old.set('a', 1)
    await old.close!()
    assert.equal(mode(shared).toString(8), '755')
    assert.equal(mode(join(shared, 'old.sqlite')).toString(8), '640')
  } finally {
    process.umask(previous)
  }
})

fromUrl('accepts a relative sqlite path', async () => {
  const cwd = process.cwd()
  process.chdir(dir)
  try {
    const storage = await storageFromUrl('sqlite://./relative/store.sqlite')
    await storage.set('a', 1)
    await storage.close!()
    assert.ok(existsSync(join(dir, 'relative', 'store.sqlite')))
  } finally {
    process.chdir(cwd)
  }
})

fromUrl('keeps data across a close and reopen of the same sqlite file', async () => {
  const url = `sqlite://${join(dir, 'persist.sqlite')}`
  const first = await storageFromUrl(url)
  await first.set('accounts:1', { email: 'a@example.com' })
  await first.set('otp:1', '123456', 60_000)
  await first.close!()
  const second = await storageFromUrl(url)
  assert.deepEqual(await second.get('accounts:1'), { email: 'a@example.com' })
  assert.equal(await second.get('otp:1'), '123456')
  await second.close!()
})

fromUrl('keeps namespaces apart in one sqlite file', async () => {
  const url = `sqlite://${join(dir, 'shared.sqlite')}`
  const a = await storageFromUrl(url, { namespace: 'a' })
  const b = await storageFromUrl(url, { namespace: 'b' })
  await a.set('k', 'from a')
  assert.equal(await b.get('k'), undefined)
  const listed: string[] = []
  for await (const [key] of b.list('')) listed.push(key)
  assert.deepEqual(listed, [])
  await Promise.all([a.close!(), b.close!()])
})

fromUrl('fails when the sqlite parent directory cannot be created', async () => {
  const file = join(dir, 'a-file')
  const storage = await storageFromUrl(`sqlite://${file}`)
  await storage.close!()
  await assert.rejects(storageFromUrl(`sqlite://${file}/inside/store.sqlite`), /EEXIST|ENOTDIR|Cannot open the store/)
})

fromUrl('fails at once, naming the store, when SQLite cannot open the file', async () => {
  await assert.rejects(storageFromUrl(`sqlite://${dir}`), (error: Error) => {
    assert.match(error.message, /Cannot open the store at sqlite:\/\/.*SQLITE_CANTOPEN/)
    assert.ok(error.cause instanceof Error)
    return true
  })
})

fromUrl('fails at once when Redis is unreachable', async () => {
  await assert.rejects(storageFromUrl('redis://127.0.0.1:1', { pingTimeoutMs: 3000 }), /Cannot open the store at redis:\/\/127\.0\.0\.1:1/)
})

fromUrl('fails at once when PostgreSQL is unreachable, without leaking the password', async () => {
  await assert.rejects(storageFromUrl('postgres://u:hunter2@127.0.0.1:1/db', { pingTimeoutMs: 3000 }), (error: Error) => {
    assert.match(error.message, /Cannot open the store at postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/db/)
    assert.doesNotMatch(error.message, /hunter2/)
    return true
  })
})

fromUrl('names the package to install when a store driver is missing', () => {
  const cause = Object.assign(new Error("Cannot find package '@keyv/sqlite'"), { code: 'ERR_MODULE_NOT_FOUND' })
  const error = missingPackageError('sqlite', '@keyv/sqlite', cause)
  assert.equal(error.message, 'GATEWAY_STORE=sqlite://… needs the optional package @keyv/sqlite: npm install @keyv/sqlite')
  assert.equal(error.cause, cause)
})

fromUrl.run()

{
  const outageSuite = suite('storage-keyv: redis outage')
  const outage = needing(outageSuite, REDIS, 'the Redis outage suite of storage-keyv (a proxy in front of the shared Redis)')
  const redisUrl = REDIS.value!

  outage('fails fast while Redis is unreachable, recovers when it is back, and closes without hanging', async () => {
    const target = new URL(redisUrl)
    const proxy = new TcpProxy(target.hostname, Number(target.port || 6379))
    const port = await proxy.start()
    const storage = await storageFromUrl(Object.assign(new URL(redisUrl), { host: `127.0.0.1:${port}` }).href, { pingTimeoutMs: 1000 })
    const key = `outage-${process.pid}-${Date.now()}`
    try {
      await storage.set(key, 'kept')
      await proxy.stop()
      await assert.rejects(storage.ping!(), /Storage ping/)
      await assert.rejects(storage.get(key), /Storage get/)
      await assert.rejects(storage.add!(`${key}-claim`, 'mine'), /Storage add/)
      await assert.rejects(storage.compareAndSet!(key, 'kept', 'changed'), /Storage compareAndSet/)
      await proxy.start(port)
      await eventually(() => storage.ping!())
      assert.equal(await storage.get(key), 'kept')
      assert.equal(await storage.add!(`${key}-claim`, 'mine', 60_000), true)
      await storage.delete(`${key}-claim`)
      await storage.delete(key)
      await proxy.stop()
    } finally {
      await storage.close!()
      await proxy.stop()
    }
  })

  outage('closes without hanging while Redis does not answer (the connection open, no reply coming: a stopped server)', async () => {
    const target = new URL(redisUrl)
    const proxy = new TcpProxy(target.hostname, Number(target.port || 6379))
    const port = await proxy.start()
    const storage = await storageFromUrl(Object.assign(new URL(redisUrl), { host: `127.0.0.1:${port}` }).href, { pingTimeoutMs: 1_000 })
    try {
      proxy.freeze()
      const pending = storage.get(`frozen-${process.pid}`).then(
        () => 'answered',
        () => 'failed',
      )
      await new Promise(resolve => setTimeout(resolve, 100)) // the get is on the wire
      const closed = await Promise.race([storage.close!().then(() => 'closed'), new Promise(resolve => setTimeout(resolve, 3000, 'still closing after 3 s'))])
      assert.equal(closed, 'closed')
      assert.equal(await pending, 'failed', 'the call left waiting fails with the dropped connection')
    } finally {
      await proxy.stop()
    }
  })

  outage('leaves nothing running once closed: a process that used a Redis store ends by itself', async () => {
    // KeyvRedis's own connectionTimeout left a 5 s timer running per connect, which held the process after close().
    // The child prints what still runs only if it is still alive a second after the close (the unref'd timer holds nothing).
    const script = [
      "import { storageFromUrl } from './adapters/storage-keyv/index.ts'",
      `const storage = await storageFromUrl(${JSON.stringify(redisUrl)})`,
      "await storage.get('anything')",
      'await storage.close()',
      'setTimeout(() => console.log(JSON.stringify(process.getActiveResourcesInfo())), 1000).unref()',
    ].join('\n')
    const { stdout } = await execFileAsync(process.execPath, [...NODE_TS, '--input-type=module', '-e', script])
    assert.equal(stdout.trim(), '', 'the process ended on its own once the store was closed')
  })

  outageSuite.run()
}

{
  const pgSuite = suite('storage-keyv: postgres outage')
  const pg = needing(pgSuite, POSTGRES, 'the PostgreSQL outage suite of storage-keyv (a proxy in front of the shared PostgreSQL)')

  pg('closes without hanging while PostgreSQL does not answer (a query on the wire, no reply coming)', async () => {
    const target = new URL(POSTGRES.value!)
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432))
    const port = await proxy.start()
    const url = Object.assign(new URL(POSTGRES.value!), { host: `127.0.0.1:${port}` }).href
    const storage = await storageFromUrl(url, { namespace: `close-${process.pid}`, pingTimeoutMs: 1_000 })
    try {
      proxy.freeze()
      const pending = storage.get('frozen').then(
        () => 'answered',
        () => 'failed',
      )
      await new Promise(resolve => setTimeout(resolve, 100)) // the query is on the wire
      const closed = await Promise.race([storage.close!().then(() => 'closed'), new Promise(resolve => setTimeout(resolve, 3000, 'still closing after 3 s'))])
      assert.equal(closed, 'closed')
      assert.equal(await pending, 'failed', 'the call left waiting fails with the dropped connection')
    } finally {
      await proxy.stop()
    }
  })

  pgSuite.run()
}

// --- Internal helpers ---

/** Forwards TCP connections to a target; stop() drops every open connection (a simulated outage). */
class TcpProxy {
  private server?: net.Server
  private readonly sockets = new Set<net.Socket>()
  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}
  async start(port = 0): Promise<number> {
    const server = net.createServer(client => {
      const upstream = net.connect(this.port, this.host)
      for (const socket of [client, upstream]) {
        this.sockets.add(socket)
        socket.on('error', () => socket.destroy())
        socket.on('close', () => this.sockets.delete(socket))
      }
      client.pipe(upstream).pipe(client)
    })
    this.server = server
    await new Promise<void>(resolve => server.listen(port, '127.0.0.1', resolve))
    return (server.address() as net.AddressInfo).port
  }
  /** Stop forwarding in both directions, connections left open (a server that stopped answering). */
  freeze(): void {
    for (const socket of this.sockets) socket.unpipe().pause()
  }
  async stop(): Promise<void> {
    const server = this.server
    this.server = undefined
    for (const socket of this.sockets) socket.destroy()
    if (server) await new Promise(resolve => server.close(resolve))
  }
}

async function eventually(check: () => Promise<unknown>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      return void (await check())
    } catch (error) {
      if (Date.now() > deadline) throw error
      await new Promise(resolve => setTimeout(resolve, 50))
    }
  }
}
