import assert from 'node:assert/strict'
import net from 'node:net'
import { suite } from 'uvu'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'

/**
 * storageFromUrl pings the store and fails within pingTimeoutMs when it does not answer. On PostgreSQL
 * the ping failed in time, but the close that follows waited for the pool to end, and the pool waited
 * for the connection it was opening: a server that takes the connection and never speaks (a stopped
 * server behind a proxy, a port of another service that waits for its client) held the open for ever.
 * The pool's connections are dropped past pingTimeoutMs on close, those still opening included.
 * No PostgreSQL needed: a listener that takes the connection and never answers.
 */
const test = suite('storage-keyv: a PostgreSQL that never answers')

test('storageFromUrl of a PostgreSQL that takes the connection and never answers rejects, instead of hanging on the close', async () => {
  const sockets = new Set<net.Socket>()
  const silent = net.createServer(socket => sockets.add(socket.on('error', () => {})))
  await new Promise<void>(resolve => silent.listen(0, '127.0.0.1', resolve))
  try {
    const url = `postgres://postgres@127.0.0.1:${(silent.address() as net.AddressInfo).port}/test`
    const opened = storageFromUrl(url, { pingTimeoutMs: 500 }).then(
      () => 'opened',
      (error: Error) => error.message,
    )
    let timer: NodeJS.Timeout | undefined
    const hung = new Promise(resolve => (timer = setTimeout(resolve, 10_000, 'still opening after 10 s')))
    const answer = await Promise.race([opened, hung]).finally(() => clearTimeout(timer))
    assert.match(String(answer), /Cannot open the store at postgres:\/\/postgres@127\.0\.0\.1:\d+\/test: .*no answer within 500 ms/)
  } finally {
    for (const socket of sockets) socket.destroy()
    await new Promise(resolve => silent.close(resolve))
  }
})

test.run()
