import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { hostname } from 'node:os'
import { Instances } from '../../src/domain/instances.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { hostTag } from '../../src/store/process-alive.ts'
import { silentLogger, type Logger } from '../../src/logger.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'

/**
 * Issue 27: a process starting on a store for one process at a time (SQLite, memory) that finds
 * another live record waits for that record's heartbeat to lapse before refusing; it refuses as
 * soon as it sees the heartbeat move.
 */
const test = suite('Instances.start: wait for a record in the way to lapse, refuse one that heartbeats')

/** A store of one host (as SQLite), holding the record of another live process of this host (pid 1, always running). */
function hostStoreWithOther(ttlMs: number, reach: 'host' | 'network' = 'host', url?: string) {
  const storage = Object.assign(memoryStorage(), { reach })
  const id = `${hostTag()}-1-${Date.now().toString(36)}-abcdef`
  let record = { id, host: hostname(), pid: 1, startedAt: Date.now(), heartbeatAt: Date.now(), ...(url ? { url } : {}) }
  const beat = () => storage.set(`instance:${id}`, (record = { ...record, heartbeatAt: record.heartbeatAt + 1 }), ttlMs)
  return { storage, id, beat }
}

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = []
  const log = (obj: object | string, msg?: string) => void lines.push(typeof obj === 'string' ? obj : (msg ?? ''))
  return { ...silentLogger, lines, info: log, warn: log }
}

test('a live record whose heartbeat lapses: the start waits for it (logged once), then goes on', async () => {
  const { storage, id, beat } = hostStoreWithOther(400)
  await beat()
  const logger = recordingLogger()
  const instances = new Instances(storage, new KeyedLock(), { heartbeatMs: 100, ttlMs: 400 }, logger)
  await instances.start(false)
  try {
    assert.is(logger.lines.filter(line => line.includes('waiting for its heartbeat to lapse')).length, 1, logger.lines.join('\n'))
    assert.not.ok(instances.view.liveRecords.some(record => record.id === id))
    assert.is(instances.view.isAlive(id), false)
  } finally {
    await instances.stop()
  }
})

test('a live record that keeps heartbeating: refused as soon as the heartbeat moves, long before its time-to-live', async () => {
  const { storage, beat } = hostStoreWithOther(60_000)
  await beat()
  const timer = setInterval(() => void beat(), 50)
  const started = Date.now()
  try {
    const instances = new Instances(storage, new KeyedLock(), { heartbeatMs: 200, ttlMs: 60_000 }, silentLogger)
    await instances.start(false).then(
      () => assert.unreachable('should refuse'),
      err => assert.match(String(err), /Another gateway process \(.*\) uses this store, which is for one process at a time/),
    )
    assert.ok(Date.now() - started < 30_000, 'refused before the other record could lapse')
    assert.equal([...(await collect(storage.list('instance:')))].length, 1, 'only the other record is left')
  } finally {
    clearInterval(timer)
  }
})

test("cluster mode: a live record of this host with this instance's address (its previous run) is waited for, and refused while it heartbeats", async () => {
  const url = 'http://127.0.0.1:3999'
  const lapsing = hostStoreWithOther(400, 'network', url)
  await lapsing.beat()
  const first = new Instances(lapsing.storage, new KeyedLock(), { heartbeatMs: 100, ttlMs: 400 }, silentLogger, url)
  await first.start(true)
  assert.not.ok(first.view.liveRecords.some(record => record.id === lapsing.id))
  await first.stop()

  const beating = hostStoreWithOther(60_000, 'network', url)
  await beating.beat()
  const timer = setInterval(() => void beating.beat(), 50)
  try {
    const second = new Instances(beating.storage, new KeyedLock(), { heartbeatMs: 200, ttlMs: 60_000 }, silentLogger, url)
    await second.start(true).then(
      () => assert.unreachable('should refuse'),
      err => assert.match(String(err), /is registered with this instance's address \(http:\/\/127\.0\.0\.1:3999\) and keeps heartbeating/),
    )
    // Another address of this host is another instance: welcome in cluster mode.
    const other = new Instances(beating.storage, new KeyedLock(), { heartbeatMs: 200, ttlMs: 60_000 }, silentLogger, 'http://127.0.0.1:4000')
    await other.start(true)
    assert.ok(other.view.liveRecords.some(record => record.id === beating.id))
    await other.stop()
  } finally {
    clearInterval(timer)
  }
})

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = []
  for await (const item of items) all.push(item)
  return all
}

test.run()
