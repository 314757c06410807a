import { randomBytes } from 'node:crypto'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { storageFromUrl } from '../../../adapters/storage-keyv/index.ts'
import { newClaim } from '../../../src/domain/claims.ts'
import type { InstanceRecord } from '../../../src/domain/instance-view.ts'
import type { Liveness } from '../../../src/domain/instances.ts'
import { encodeAction } from '../../../src/domain/messaging/actions.ts'
import { createScheduleStore, itemKey } from '../../../src/domain/messaging/schedule-store.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { instanceIdOf, processGroup, whilePaused } from '../../helpers/line-process.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { needing, POSTGRES, REDIS } from '../../helpers/requires.ts'

/**
 * A process back from a pause past the ttl (SIGSTOP) registers again, and its fence lifts: the
 * scheduled messages it claims from then on are its own. Another process whose last registry read (up
 * to one heartbeat old) still took it for gone must not take its claim over and send the message too
 * (docs/scaling.md, "Where a duplicate can happen"). Separate node processes
 * (test/helpers/schedule-sender.ts): A schedules a message as it registers again, and the network's
 * answer to its send is held; B reads the registry every 1.5 s and scans the schedules first once A's
 * send is under way, then every 50 ms (as its periodic rescan, or a departure's, does at any moment).
 */
const test = suite('scheduler: the claims of a process back from a pause')

for (const service of [REDIS, POSTGRES]) {
  const storeTest = needing(test, service, `rejoining scheduler processes on ${service.name}`)

  storeTest(
    `on ${service.name}, a message a process claims once registered again is not taken over and sent by one whose registry read still took it for gone`,
    async () => {
      const namespace = `zapgate-test-${randomBytes(4).toString('hex')}`
      const storage = await storageFromUrl(service.value!, { namespace })
      const store = createScheduleStore(storage, new KeyedLock())
      const children = processGroup(
        'test/helpers/schedule-sender.ts',
        { STORE_URL: service.value!, STORE_NAMESPACE: namespace, TTL_MS: '4500' },
        'scheduler process',
      )
      const instance = (id: string) => storage.get<InstanceRecord>(`instance:${id}`)
      try {
        const a = children.start({ SCHEDULE_ON_REJOIN: 'late', HOLD: 'late' })
        const aId = await instanceIdOf(a)
        const b = children.start({ HEARTBEAT_MS: '1500', POLL_MS: '50', DEFER_START: '1' })
        const bId = await instanceIdOf(b)
        await whilePaused(a, () => waitFor(async () => (await instance(aId)) === undefined, 20_000, 'B judged A gone (it removed its record)'))
        await a.line(line => line === 'rejoined')
        await a.line(line => line === 'network late', 10_000)
        b.process.kill('SIGUSR2') // B's first scan, within a heartbeat of A's return
        // B has read the registry since A registered again once two more of its heartbeats landed.
        const beat = (await instance(bId))?.beat ?? 0
        await waitFor(async () => ((await instance(bId))?.beat ?? 0) >= beat + 2, 10_000, 'two heartbeats of B')
        a.process.kill('SIGUSR2')
        await a.line(line => line.startsWith('performed '))
        await waitFor(async () => (await store.forDevice('d1')).length === 0, 10_000, 'the item removed once sent')
        const sends = children.started.flatMap(child => child.lines).filter(line => line === 'network late').length
        assert.is(sends, 1, `the scheduled message reached the network ${sends} times (A: ${a.lines.join(' | ')}; B: ${b.lines.join(' | ')})`)
        assert.ok(a.lines.includes('scheduled'), `A's schedule answered (A: ${a.lines.join(' | ')})`)
      } finally {
        children.killAll()
        for await (const [key] of storage.list('')) await storage.delete(key)
        await storage.close!()
      }
    },
  )
}

/** B's liveness: its last registry read took A for gone; A's record read now says `aBack` (registered again since). */
const viewOfB = (aBack: boolean): Liveness => ({ id: 'B', isAlive: id => id === 'B', onDeparture() {}, confirmGone: async id => !(id === 'A' && aBack) })

test('a claim of a process the last registry read took for gone, back since (its record read now), holds: its item is not claimed over', async () => {
  for (const aBack of [true, false]) {
    const store = createScheduleStore(memoryStorage(), new KeyedLock())
    const action = { kind: 'send' as const, to: '5511988880002', message: { kind: 'text' as const, text: 'oi' } }
    const input = { accountId: 'a1', deviceId: 'd1', to: action.to, summary: 'oi', dueAt: Date.now(), agendamento: '2030-01-01 00:00:00' }
    const item = await store.add(input, encodeAction(action))
    const ofA = await store.claim(item, 90_000, { id: 'A', isAlive: () => true, onDeparture() {} })
    assert.is(ofA?.claim?.owner, 'A')
    const ofB = await store.claim(item, 90_000, viewOfB(aBack))
    if (aBack) {
      assert.is(ofB, undefined, "B does not claim A's item")
      assert.is((await store.get(itemKey(item)))?.claim?.token, ofA!.claim!.token, "A's claim stays")
    } else assert.is(ofB?.claim?.owner, 'B', 'gone: claimed over')
  }
})

/** An item marked `opening` by A (its add under way) is not settled away by B while A's record says it is back. */
test("an add under way of a process back since (its record read now) is not undone by another's claim", async () => {
  for (const aBack of [true, false]) {
    const storage = memoryStorage()
    const store = createScheduleStore(storage, new KeyedLock())
    const opening = { id: 'i1', accountId: 'a1', deviceId: 'd1', to: '5511988880002', summary: 'oi', dueAt: Date.now(), agendamento: '2030-01-01 00:00:00' }
    await storage.set(`schedule:${itemKey(opening)}`, {
      ...opening,
      state: 'pending',
      attempts: 0,
      createdAt: Date.now(),
      quota: 'opening',
      claim: newClaim('A', 60_000),
    })
    const ofB = await store.claim({ ...opening, state: 'pending', attempts: 0, createdAt: 0 }, 90_000, viewOfB(aBack))
    assert.is(ofB?.claim?.owner, aBack ? undefined : 'B', aBack ? "A's add left to A" : 'gone: claimed, to settle')
  }
})

test.run()
