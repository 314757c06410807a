import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { createScheduleStore, type ScheduleStore } from '../../../src/domain/messaging/schedule-store.ts'
import { decodeAction, encodeAction, type Action } from '../../../src/domain/messaging/actions.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'

const me = soloLiveness('me')

const test = suite<{ store: ScheduleStore; storage: ReturnType<typeof memoryStorage> }>('schedule store: claims and outcomes')

test.before.each(ctx => {
  ctx.storage = memoryStorage()
  ctx.store = createScheduleStore(ctx.storage, new KeyedLock())
})

const text: Action = { kind: 'send', to: '5511988880002', message: { kind: 'text', text: 'oi' } }
const input = (deviceId = 'd1') => ({ accountId: 'a1', deviceId, to: '5511988880002', summary: 'oi', dueAt: Date.now(), agendamento: '2030-01-01 00:00:00' })

test('claim(item) holds an item for one claimant: a second claim fails until the lease runs out', async ({ store }) => {
  const item = await store.add(input(), encodeAction(text))
  const first = await store.claim(item, 60_000, me)
  assert.ok(first?.claim)
  assert.equal(await store.claim(item, 60_000, me), undefined)
  const short = await store.add(input(), encodeAction(text))
  assert.ok(await store.claim(short, 1, me))
  await new Promise(resolve => setTimeout(resolve, 5))
  assert.ok(await store.claim(short, 60_000, me), 'an expired claim can be taken over')
})

test('a claim of an instance that is gone is taken over at once, whatever its lease says', async ({ store }) => {
  const item = await store.add(input(), encodeAction(text))
  const other = { id: 'other', isAlive: (id: string | undefined) => id === 'other', onDeparture() {} }
  assert.ok(await store.claim(item, 600_000, other))
  assert.equal(
    await store.claim(item, 60_000, { ...other, id: 'third', isAlive: id => id === 'third' || id === 'other' }),
    undefined,
    'held while its instance lives',
  )
  assert.ok(await store.claim(item, 60_000, me), 'its instance is not alive for me: taken over')
})

test('concurrent claims of one item: exactly one wins', async ({ store }) => {
  const item = await store.add(input(), encodeAction(text))
  const results = await Promise.all(Array.from({ length: 20 }, () => store.claim(item, 60_000, me)))
  assert.equal(results.filter(Boolean).length, 1)
})

test('complete(item) removes the item and its action', async ({ store, storage }) => {
  const item = await store.add(input(), encodeAction(text))
  await store.complete((await store.claim(item, 60_000, me))!)
  assert.deepEqual(await store.forDevice('d1'), [])
  assert.equal(storage.size, 0)
})

test('fail(item, error, retryAt) counts the attempt and releases the claim; without retryAt the item is failed and its action dropped', async ({ store }) => {
  const item = await store.add(input(), encodeAction(text))
  await store.fail((await store.claim(item, 60_000, me))!, 'boom', Date.now() + 1000)
  let [stored] = await store.forDevice('d1')
  assert.deepEqual([stored.state, stored.attempts, stored.claim, stored.lastError], ['pending', 1, undefined, 'boom'])
  assert.ok(await store.body(stored))
  await store.fail((await store.claim(stored, 60_000, me))!, 'again', undefined)
  ;[stored] = await store.forDevice('d1')
  assert.deepEqual([stored.state, stored.attempts], ['failed', 2])
  assert.equal(await store.body(stored), undefined)
  assert.equal(await store.claim(stored, 60_000, me), undefined, 'a failed item is never claimed')
})

test('fail(item) by a claimant whose claim was taken over changes nothing', async ({ store }) => {
  const item = await store.add(input(), encodeAction(text))
  const stale = (await store.claim(item, 1, me))!
  await new Promise(resolve => setTimeout(resolve, 5))
  const current = (await store.claim(item, 60_000, me))!
  await store.fail(stale, 'late', undefined)
  const [stored] = await store.forDevice('d1')
  assert.deepEqual([stored.state, stored.claim?.token], ['pending', current.claim?.token])
})

test('removeDevice(id) drops that device items only', async ({ store }) => {
  await store.add(input('d1'), encodeAction(text))
  await store.add(input('d2'), encodeAction(text))
  assert.equal(await store.removeDevice('d1'), 1)
  assert.equal((await store.forDevice('d1')).length, 0)
  assert.equal((await store.forDevice('d2')).length, 1)
})

test('a stored action with media decodes to the same bytes', async ({ store }) => {
  const media: Action = { kind: 'send', to: 'x', message: { kind: 'media', media: 'image', file: { data: Buffer.from([1, 2, 3]), mimetype: 'image/png' } } }
  const item = await store.add(input(), encodeAction(media))
  const decoded = decodeAction((await store.body(item))!)
  assert.deepEqual(decoded, media)
})

test.run()
