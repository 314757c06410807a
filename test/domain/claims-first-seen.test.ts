import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { claimedUntil, type Claim } from '../../src/domain/claims.ts'
import type { Liveness } from '../../src/domain/instances.ts'

/**
 * Another instance's claim lasts its length from when this process first saw it (docs/scaling.md,
 * "Claims and clocks": up to one length longer than meant, never shorter). Many claims seen within
 * one length must not make this process forget a first sighting and see the claim again as new.
 */
const test = suite('claims: first sightings under load')

const me: Liveness = { id: 'me', isAlive: id => id === 'me' || id === 'other', onDeparture() {} }
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))
const claimOf = (token: string, ms: number): Claim => ({ owner: 'other', until: Date.now() + ms, ms, token })

test('a claim ends one length after its first sighting even when 20 000 other claims were seen meanwhile', async () => {
  const watched = claimOf('watched', 500)
  assert.ok(claimedUntil(watched, me) !== undefined, 'held when first seen')
  const busy = Array.from({ length: 20_000 }, (_, i) => claimOf(`busy-${i}`, 60_000))
  const started = performance.now()
  for (const claim of busy) claimedUntil(claim, me) // a backlog of others' claims, all still held
  assert.ok(performance.now() - started < 400, `20 000 sightings took ${Math.round(performance.now() - started)} ms`)
  await sleep(550)
  assert.is(claimedUntil(watched, me), undefined, 'ended after its length, not seen again as new')
  assert.ok(claimedUntil(busy[0], me)! - Date.now() < 60_000, 'the others still held from their first sighting')
})

test.run()
