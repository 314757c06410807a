import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Instances } from '../../src/domain/instances.ts'
import { silentLogger } from '../../src/logger.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { pausableStorage } from '../helpers/cluster-in-process.ts'
import { waitFor } from '../helpers/gateway.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'

/**
 * The instance registry's side of "is this claim mine" (issue 27, finding 5): an instance cut from
 * the store fences itself (it stands no more) before another judges it gone; it stands again only
 * once a heartbeat reached the store, and from then on another instance reading its record, after
 * the claim it wants to take over, finds it alive.
 */
const test = suite('instance liveness across a store outage of one instance')

const settings = { heartbeatMs: 50, ttlMs: 600 }

test('cut from the store an instance fences before the other judges it gone; back, it stands again and its record read now says alive', async () => {
  const shared = memoryStorage()
  const cut = pausableStorage(shared.connectAgain())
  const a = new Instances(cut.storage, new KeyedLock(), settings, silentLogger)
  const b = new Instances(shared, new KeyedLock(), settings, silentLogger)
  let fences = 0
  let fencedWhileAlive = false
  a.events.on('fence', () => {
    fences++
    fencedWhileAlive = b.view.isAlive(a.id)
  })
  try {
    await a.start(true)
    await b.start(true)
    assert.ok(a.standing && b.standing)
    await waitFor(() => b.view.liveRecords.some(record => record.id === a.id), 5_000, 'b to see a')

    cut.pause()
    await waitFor(() => !a.standing && fences === 1, 5_000, 'a to fence itself')
    assert.ok(fencedWhileAlive, 'a let go while b still took it for alive')
    await waitFor(() => !b.view.isAlive(a.id), 5_000, 'b to judge a gone')
    assert.not.ok(a.standing, 'a still does not stand while its store does not answer')
    assert.ok(await b.view.confirmGone(a.id), 'a read of its record now confirms it gone')

    cut.resume()
    await waitFor(() => a.standing, 5_000, 'a to stand again')
    assert.not.ok(await b.view.confirmGone(a.id), 'once a stands again, its record read now says alive: its claims are not taken')
    await waitFor(() => b.view.isAlive(a.id), 5_000, 'b to see a again')
  } finally {
    cut.resume()
    await a.stop()
    await b.stop()
  }
})

test('heartbeat writes that landed with their answers lost, then one answered, then the store cut: the instance still fences before the other judges it gone', async () => {
  const shared = memoryStorage()
  let mode: 'ok' | 'answers-lost' | 'one-answer' | 'cut' = 'ok'
  const writes = new Set(['set', 'add', 'compareAndSet', 'deleteIfEqual', 'delete'])
  const flaky = new Proxy(shared.connectAgain(), {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function' || name === 'list') return typeof value === 'function' ? value.bind(target) : value
      return async (...args: unknown[]) => {
        while (mode === 'cut') await new Promise(resolve => setTimeout(resolve, 20)) // held until the store is back
        const result = await value.apply(target, args)
        if (mode === 'answers-lost' && writes.has(String(name))) throw new Error('answer lost (the write landed)')
        if (mode === 'one-answer' && name === 'set') mode = 'cut' // the heartbeat that registers again is answered; the store is cut right after
        return result
      }
    },
  })
  const timing = { heartbeatMs: 100, ttlMs: 1_000 }
  const a = new Instances(flaky, new KeyedLock(), timing, silentLogger)
  const b = new Instances(shared, new KeyedLock(), timing, silentLogger)
  let standingWhenJudgedGone: boolean | undefined
  b.view.onDeparture(gone => void (gone.includes(a.id) && (standingWhenJudgedGone ??= a.standing)))
  try {
    await a.start(true)
    await b.start(true)
    await waitFor(() => b.view.liveRecords.some(record => record.id === a.id), 5_000, 'b to see a')
    mode = 'answers-lost' // longer than the third of the ttl between a's fence and b's verdict
    await new Promise(resolve => setTimeout(resolve, 600))
    mode = 'one-answer'
    await waitFor(() => standingWhenJudgedGone !== undefined, 5_000, 'b to judge a gone')
    assert.is(standingWhenJudgedGone, false, 'a still stood (holding its devices, unfenced) when b judged it gone and could take them')
  } finally {
    mode = 'ok'
    await a.stop()
    await b.stop()
  }
})

test.run()
