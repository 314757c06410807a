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

test.run()
