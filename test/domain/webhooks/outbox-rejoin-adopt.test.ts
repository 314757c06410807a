import { randomBytes } from 'node:crypto'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { storageFromUrl } from '../../../adapters/storage-keyv/index.ts'
import { newClaim } from '../../../src/domain/claims.ts'
import type { InstanceRecord } from '../../../src/domain/instance-view.ts'
import type { Liveness } from '../../../src/domain/instances.ts'
import { createOutboxStore, newOutboxRecord, outboxKey, type OutboxRecord } from '../../../src/domain/webhooks/outbox-store.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { instanceIdOf, whilePaused } from '../../helpers/line-process.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { needing, POSTGRES, REDIS } from '../../helpers/requires.ts'
import { countingReceiver, startDeliverer, type Deliverer } from '../../helpers/webhook-processes.ts'

/**
 * A process back from a pause past the ttl (SIGSTOP) registers again, and its fence lifts: the events
 * it records and claims from then on are its own. Another process whose last registry read (up to one
 * heartbeat old) still took it for gone must not adopt them, drop its claim and POST them too
 * (docs/scaling.md, "Where a duplicate can happen"). Separate node processes
 * (test/helpers/webhook-deliverer.ts): A records an event as it registers again, its POST held by the
 * receiver; B reads the registry every 1.5 s and rescans the outbox every 50 ms (as its periodic
 * rescan, or a departure's scan of a long outbox, does at any moment).
 */
const test = suite('webhook outbox: the events of a process back from a pause')

for (const service of [REDIS, POSTGRES]) {
  const storeTest = needing(test, service, `rejoining webhook processes on ${service.name}`)

  storeTest(
    `on ${service.name}, an event a process claims once registered again is not adopted by one whose registry read still took it for gone`,
    async () => {
      const namespace = `zapgate-test-${randomBytes(4).toString('hex')}`
      const storage = await storageFromUrl(service.value!, { namespace })
      const receiver = await countingReceiver('late')
      const children: Deliverer[] = []
      const start = (env: Record<string, string>) => (
        children.push(startDeliverer({ STORE_URL: service.value!, STORE_NAMESPACE: namespace, RECEIVER_URL: receiver.url, TTL_MS: '4500', ...env })),
        children.at(-1)!
      )
      const instance = (id: string) => storage.get<InstanceRecord>(`instance:${id}`)
      try {
        const a = start({ RECORD_ON_REJOIN: 'late' })
        const aId = await instanceIdOf(a)
        const b = start({ HEARTBEAT_MS: '1500', RECONCILE_MS: '50' })
        const bId = await instanceIdOf(b)
        await whilePaused(a, () => waitFor(async () => (await instance(aId)) === undefined, 20_000, 'B judged A gone (it removed its record)'))
        await a.line(line => line === 'rejoined')
        await waitFor(() => receiver.posts('late') >= 1, 10_000, "A's POST of the event it recorded once back")
        // B has read the registry since A registered again once two more of its heartbeats landed.
        const beat = (await instance(bId))?.beat ?? 0
        await waitFor(async () => ((await instance(bId))?.beat ?? 0) >= beat + 2, 10_000, 'two heartbeats of B')
        receiver.release()
        await a.line(line => line.startsWith('sender late '))
        const posts = receiver.posts('late')
        assert.is(posts, 1, `the event was POSTed ${posts} times (A: ${a.lines.join(' | ')}; B: ${b.lines.join(' | ')})`)
      } finally {
        for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL')
        await receiver.close()
        for await (const [key] of storage.list('')) await storage.delete(key)
        await storage.close!()
      }
    },
  )
}

/** B's liveness: its last registry read took A for gone; A's record read now says `aBack` (registered again since). */
const viewOfB = (aBack: boolean): Liveness => ({ id: 'B', isAlive: id => id === 'B', onDeparture() {}, confirmGone: async id => !(id === 'A' && aBack) })

test('a claim of a process the last registry read took for gone, back since (its record read now), holds: neither adopted away nor claimed over', async () => {
  for (const aBack of [true, false]) {
    const storage = memoryStorage()
    const store = createOutboxStore(storage, new KeyedLock())
    const now = Date.now()
    const event = (id: string, owner: string): OutboxRecord => ({
      ...newOutboxRecord({ id, deviceId: 'd1', accountId: 'acc', event: 'Texto', body: '{}' }, now, owner),
      lease: newClaim('A', 35_000, now),
    })
    // A's own event, claimed by A; and one B adopted while A was away, that A claimed on its return.
    await storage.set(`webhook-outbox:${outboxKey('d1', 'own')}`, event('own', 'A'))
    await storage.set(`webhook-outbox:${outboxKey('d1', 'adopted')}`, event('adopted', 'B'))
    const adopted = await store.adopt(outboxKey('d1', 'own'), viewOfB(aBack))
    const claimed = await store.claim(outboxKey('d1', 'adopted'), viewOfB(aBack), now, 35_000)
    if (aBack) {
      assert.is(adopted, undefined, "A's event is not adopted")
      assert.is((await store.get(outboxKey('d1', 'own')))?.lease?.owner, 'A', "A's claim stays")
      assert.type(claimed, 'number', "B waits for A's claim")
      assert.is((await store.get(outboxKey('d1', 'adopted')))?.lease?.owner, 'A')
    } else {
      assert.is(adopted?.owner, 'B', 'gone: adopted')
      assert.is(adopted?.lease, undefined, 'its void claim dropped')
      assert.is((claimed as OutboxRecord)?.lease?.owner, 'B', 'gone: claimed over')
    }
  }
})

test.run()
