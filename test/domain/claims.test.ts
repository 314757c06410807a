import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { claimedUntil, newClaim, type Claim } from '../../src/domain/claims.ts'
import { DueWork, ShutdownAbort } from '../../src/domain/due-work.ts'
import type { Liveness } from '../../src/domain/instances.ts'
import { silentLogger } from '../../src/logger.ts'
import { waitFor } from '../helpers/gateway.ts'

/**
 * The cross-process rules in one place: the one claim check (schedules, webhook events and device
 * leases are judged by it) and the one engine that runs due work in per-device lanes.
 */
const test = suite('claims and the due-work engine')

const alive = new Set(['me', 'other'])
const me: Liveness = { id: 'me', isAlive: id => id !== undefined && alive.has(id), onDeparture() {} }
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

test('an own claim holds until its until, by the own clock; an expired one does not', () => {
  const now = Date.now()
  const claim = newClaim('me', 1_000, now)
  assert.is(claimedUntil(claim, me, { now }), now + 1_000)
  assert.is(claimedUntil(claim, me, { now: now + 1_000 }), undefined, 'expired')
  assert.is(claimedUntil(claim, me, { now, ownYields: true }), undefined, 'the reader yields to nobody for its own claim when asked')
})

test("another live instance's claim lasts its length from when this reader first saw it, whatever the holder's clock says", async () => {
  const now = Date.now()
  // The holder's clock is an hour behind: its until is long past by ours, yet the claim is fresh.
  const behind: Claim = { owner: 'other', until: now - 3_600_000 + 100, ms: 100, token: 'behind' }
  assert.ok(claimedUntil(behind, me, { now }) !== undefined, 'held: the reader does not compare its clock with the holder')
  // The holder's clock is an hour ahead: its until is far off by ours, yet the claim ends after its length.
  const ahead: Claim = { owner: 'other', until: now + 3_600_000 + 60, ms: 60, token: 'ahead' }
  const end = claimedUntil(ahead, me, { now })
  assert.ok(end !== undefined && end <= now + 60, `held for its length only: ${end! - now} ms`)
  await sleep(120)
  assert.is(claimedUntil(ahead, me), undefined, 'lapsed after its length by the reader clock')
  assert.is(claimedUntil(behind, me), undefined)
})

test("a dead owner's claim is void at once, whatever it says; a handed-back one holds nobody off", () => {
  const claim = newClaim('gone', 600_000)
  assert.is(claimedUntil(claim, me), undefined)
  assert.is(claimedUntil({ owner: 'gone', epoch: 4 }, me), undefined)
  assert.is(claimedUntil({ owner: null, epoch: 4 }, me), undefined)
  assert.is(claimedUntil(undefined, me), undefined)
})

test('a claim without expiry (a device lease) holds while its owner lives; one without an owner (older records) holds until it expires', () => {
  assert.is(claimedUntil({ owner: 'other', epoch: 1 }, me), Infinity)
  const now = Date.now()
  assert.is(claimedUntil({ until: now + 50, token: 't' }, me, { now }), now + 50)
  assert.is(claimedUntil({ until: now - 1, token: 't' }, me, { now }), undefined)
})

test('the fencing epoch: the reader holds its claim only at the epoch it took it; a takeover raised it', () => {
  assert.is(claimedUntil({ owner: 'me', epoch: 2 }, me, { epoch: 2 }), Infinity)
  assert.is(claimedUntil({ owner: 'me', epoch: 3 }, me, { epoch: 2 }), undefined, 'taken again since, at a later epoch')
  assert.is(claimedUntil({ owner: 'other', epoch: 2 }, me, { epoch: 2 }), undefined, 'taken over by another instance')
})

/** An in-memory policy: stored records by key, with a run that the test controls. */
function memoryWork(
  run: (key: string, lane: string, shutdown: AbortSignal) => Promise<number | undefined>,
  settings: Partial<ConstructorParameters<typeof DueWork>[1]> = {},
  records = new Map<string, { lane: string; due: number }>(),
) {
  const work = new DueWork<{ lane: string; due: number }>(
    {
      what: 'test',
      async *all() {
        yield* records
      },
      async *ofLane(lane) {
        for (const entry of records) if (entry[1].lane === lane) yield entry
      },
      laneOf: record => record.lane,
      dueOf: async (_key, record) => (record.due < 0 ? undefined : record.due),
      run,
    },
    { concurrencyPerLane: 1, capacity: 100, lineLimit: 100, reconcileMs: 60_000, ...settings },
    silentLogger,
  )
  return { work, records }
}

test('lanes: at most concurrencyPerLane runs per lane, every key run once; a stuck lane holds up no other', async () => {
  const inFlight = new Map<string, number>()
  let most = 0
  const done: string[] = []
  let release!: () => void
  const stuck = new Promise<void>(resolve => (release = resolve))
  const { work } = memoryWork(
    async (key, lane) => {
      inFlight.set(lane, (inFlight.get(lane) ?? 0) + 1)
      most = Math.max(most, ...inFlight.values())
      await (lane === 'stuck' ? stuck : sleep(5))
      inFlight.set(lane, inFlight.get(lane)! - 1)
      done.push(key)
      return undefined
    },
    { concurrencyPerLane: 2 },
  )
  for (let i = 0; i < 10; i++) for (const lane of ['a', 'b', 'stuck']) work.enqueue(`${lane}${i}`, lane, Date.now())
  await waitFor(() => done.length === 20, 5_000, 'the free lanes to drain')
  assert.is(inFlight.get('stuck'), 2, 'the stuck lane has its two slots busy and no more')
  release()
  await waitFor(() => done.length === 30, 5_000, 'the stuck lane to drain')
  assert.is(most, 2)
  assert.is(new Set(done).size, 30)
  await work.close()
})

test('maxLanes: no more lanes run at once than allowed; waiting lanes start as others finish', async () => {
  const busy = new Set<string>()
  let most = 0
  let runs = 0
  const { work } = memoryWork(
    async (_key, lane) => {
      busy.add(lane)
      most = Math.max(most, busy.size)
      await sleep(10)
      busy.delete(lane)
      runs++
      return undefined
    },
    { maxLanes: 2 },
  )
  for (let i = 0; i < 3; i++) for (const lane of ['a', 'b', 'c', 'd', 'e']) work.enqueue(`${lane}${i}`, lane, Date.now())
  await waitFor(() => runs === 15, 5_000, 'every run')
  assert.is(most, 2)
  await work.close()
})

test('the retry hook: a run answers when to run again, and runs then; undefined ends it', async () => {
  const times: number[] = []
  const { work } = memoryWork(async () => {
    times.push(Date.now())
    return times.length < 3 ? Date.now() + 30 : undefined
  })
  work.enqueue('k', 'a', Date.now())
  await waitFor(() => times.length === 3, 5_000, 'three runs')
  await sleep(100)
  assert.is(times.length, 3, 'no run after undefined')
  assert.ok(times[2]! - times[1]! >= 25, 'the retry waited its time')
  await work.close()
})

test('capacity: stored work larger than the timetable is all run, never more than capacity held in memory; work not its own is not run', async () => {
  const records = new Map<string, { lane: string; due: number }>()
  const now = Date.now()
  for (let i = 0; i < 40; i++) records.set(`k${i}`, { lane: `l${i % 4}`, due: now + (i % 10) * 10 })
  records.set('not-mine', { lane: 'l0', due: -1 })
  const ran: string[] = []
  let mostHeld = 0
  const { work } = memoryWork(
    async key => {
      mostHeld = Math.max(mostHeld, (work as any).timetable.size)
      records.delete(key)
      ran.push(key)
      return undefined
    },
    { capacity: 4, lineLimit: 2 },
    records,
  )
  await work.start()
  await waitFor(() => ran.length === 40, 10_000, 'every stored record')
  assert.ok(mostHeld <= 4, `held ${mostHeld}`)
  assert.not.ok(ran.includes('not-mine'))
  await work.close()
})

test('close(): runs in flight get a grace, then are aborted with a ShutdownAbort; nothing starts after', async () => {
  let reason: unknown
  let runs = 0
  const { work } = memoryWork(async (_key, _lane, shutdown) => {
    runs++
    await new Promise(resolve => shutdown.addEventListener('abort', resolve))
    reason = shutdown.reason
    return undefined
  })
  work.enqueue('k', 'a', Date.now())
  await waitFor(() => runs === 1)
  await work.close()
  assert.ok(reason instanceof ShutdownAbort)
  work.enqueue('later', 'a', Date.now())
  await sleep(30)
  assert.is(runs, 1)
})

test.run()
