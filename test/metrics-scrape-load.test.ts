import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Storage } from '../src/ports/storage.ts'
import { withGateway } from './helpers/gateway.ts'
import { memoryStorage } from './helpers/memory-storage.ts'
import { parseMetrics } from './helpers/metrics.ts'
import { request } from './helpers/http.ts'

/** A storage that records each scan (`list`) by prefix and can hold them while `held` (a store slow to scan). */
function scanCounting(storage: Storage) {
  const scans: string[] = []
  let gate: Promise<void> | undefined
  let open = () => {}
  const counted = new Proxy(storage, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (name !== 'list') return typeof value === 'function' ? value.bind(target) : value
      return async function* (prefix: string) {
        scans.push(prefix)
        while (gate) await gate
        yield* target.list(prefix)
      }
    },
  })
  return {
    storage: counted,
    scans,
    hold: () => void (gate ??= new Promise<void>(resolve => (open = resolve))),
    release: () => ((gate = undefined), open()),
  }
}

test('simultaneous scrapes of /metrics share one collection: one scan of each store collection, however many scrapers', async () => {
  const store = scanCounting(memoryStorage())
  await withGateway({ metrics: true, storage: store.storage }, async t => {
    const { authkey } = await t.register()
    await t.addDevice(authkey, 'loja')
    await sleep(50)
    const before = store.scans.length
    assert.is(parseMetrics((await request(`${t.url}/metrics`)).text).value('zapgate_devices', { state: 'linking' }), 1)
    const perScrape = store.scans.slice(before)
    assert.ok(perScrape.length >= 3, `a scrape scans the outbox, the devices and the schedules: ${perScrape}`)

    // Ten scrapers at once while the store is slow to scan: one collection answers them all.
    store.hold()
    const start = store.scans.length
    const scrapes = Array.from({ length: 10 }, () => request(`${t.url}/metrics`))
    await sleep(200)
    store.release()
    const answers = await Promise.all(scrapes)
    for (const answer of answers) {
      assert.is(answer.status, 200)
      assert.is(parseMetrics(answer.text).value('zapgate_devices', { state: 'linking' }), 1)
    }
    // Before: 10 x 3 scans (a client hammering /metrics, which is not authenticated, multiplied the store's load).
    assert.equal(store.scans.slice(start).sort(), [...perScrape].sort())

    // A scrape after the collection ended reads the store again: a new device shows.
    await t.addDevice(authkey, 'balcao')
    assert.is(parseMetrics((await request(`${t.url}/metrics`)).text).value('zapgate_devices', { state: 'linking' }), 2)
  })
})

test.run()
