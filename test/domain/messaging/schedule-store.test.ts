import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { ScheduleStore } from '../../../src/domain/messaging/schedule-store.ts'
import { decodeAction, encodeAction, type Action } from '../../../src/domain/messaging/actions.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'

const test = suite<{ store: ScheduleStore; storage: ReturnType<typeof memoryStorage> }>('schedule store: claims and outcomes')

test.before.each(ctx => {
  ctx.storage = memoryStorage()
  ctx.store = new ScheduleStore(ctx.storage, new KeyedLock())
})

const text: Action = { kind: 'send', to: '5511988880002', message: { kind: 'text', text: 'oi' } }
const input = (deviceId = 'd1') => ({ accountId: 'a1', deviceId, to: '5511988880002', summary: 'oi', dueAt: Date.now(), agendamento: '2030-01-01 00:00:00' })

test('claim(item) holds an item for one claimant: a second claim fails until the lease runs out', async ({ store }) => {
  const item = await store.add(input(), encodeAction(text))
  const first = await store.claim(item, 60_000)
  assert.ok(first?.claim)
  assert.equal(await store.claim(item, 60_000), undefined)
  const short = await store.add(input(), encodeAction(text))
  assert.ok(await store.claim(short, 1))
  await new Promise(resolve => setTimeout(resolve, 5))
  assert.ok(await store.claim(short, 60_000), 'an expired claim can be taken over')
})

test('concurrent claims of one item: exactly one wins', async ({ store }) => {
  const item = await store.add(input(), encodeAction(text))
  const results = await Promise.all(Array.from({ length: 20 }, () => store.claim(item, 60_000)))
  assert.equal(results.filter(Boolean).length, 1)
})

test('complete(item) removes the item and its action', async ({ store, storage }) => {
  const item = await store.add(input(), encodeAction(text))
  await store.complete((await store.claim(item, 60_000))!)
  assert.deepEqual(await store.forDevice('d1'), [])
  assert.equal(storage.size, 0)
})

test('fail(item, error, retryAt) counts the attempt and releases the claim; without retryAt the item is failed and its action dropped', async ({ store }) => {
  const item = await store.add(input(), encodeAction(text))
  await store.fail((await store.claim(item, 60_000))!, 'boom', Date.now() + 1000)
  let [stored] = await store.forDevice('d1')
  assert.deepEqual([stored.state, stored.attempts, stored.claim, stored.lastError], ['pending', 1, undefined, 'boom'])
  assert.ok(await store.body(stored))
  await store.fail((await store.claim(stored, 60_000))!, 'again', undefined)
  ;[stored] = await store.forDevice('d1')
  assert.deepEqual([stored.state, stored.attempts], ['failed', 2])
  assert.equal(await store.body(stored), undefined)
  assert.equal(await store.claim(stored, 60_000), undefined, 'a failed item is never claimed')
})

test('fail(item) by a claimant whose claim was taken over changes nothing', async ({ store }) => {
  const item = await store.add(input(), encodeAction(text))
  const stale = (await store.claim(item, 1))!
  await new Promise(resolve => setTimeout(resolve, 5))
  const current = (await store.claim(item, 60_000))!
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
