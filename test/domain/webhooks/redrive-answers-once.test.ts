import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createOutboxStore, outboxKey } from '../../../src/domain/webhooks/outbox-store.ts'
import type { AtomicStorage } from '../../../src/ports/storage.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { pausingStore } from '../../helpers/pausing-storage.ts'
import { lateRecord } from '../../helpers/outbox.ts'

/**
 * A redrive whose event is still pending beside its letter (a dead-lettering under way in another process) makes that record fresh in
 * place: it is the redrive that removes the letter, as when it puts the event back, and the one that lost the letter to another
 * redrive or to a discard answers false (`WebhookAdmin.redrive`). Each store below is one process: its own lock, one shared store.
 */
const test = suite('Outbox: a redrive of a letter whose event is still pending answers true once')

/** Where the event is now: pending, dead, both or nowhere. */
async function whereIs(storage: { get(key: string): Promise<unknown> }, key: string, id: string) {
  return { pending: (await storage.get(`webhook-outbox:${key}`)) !== undefined, dead: (await storage.get(`webhook-dead:${id}`)) !== undefined }
}

/** `storage` whose removals of dead letters wait until `release`: `reached` resolves once one waits. */
function holdingLetterRemoval(storage: AtomicStorage) {
  let [release, reached]: (() => void)[] = [() => {}, () => {}]
  const released = new Promise<void>(resolve => (release = resolve))
  const waiting = new Promise<void>(resolve => (reached = resolve))
  const held: AtomicStorage = {
    ...storage,
    deleteIfEqual: async (key, expected) => (key.startsWith('webhook-dead:') && (reached(), await released), storage.deleteIfEqual(key, expected)),
  }
  return { storage: held, reached: waiting, release: () => release() }
}

/** Process A is dead-lettering the event: its letter is written, its removal of the pending record held. */
async function buryingInA(messageId: string) {
  const store = pausingStore()
  const a = createOutboxStore(store.storage, new KeyedLock())
  const record = lateRecord(messageId, 'instance-a')
  const key = outboxKey(record.deviceId, record.id)
  assert.ok(await a.add(record))
  const removal = store.pause('deleteIfEqual' as 'delete', 'webhook-outbox:')
  const burying = a.deadLetter(key, 'max-age', Date.now())
  await removal.reached
  return { store, record, key, burying, removal }
}

test('two redrives of one letter whose event is still pending (a dead-lettering under way): one answers true, the other false', async () => {
  const { store, record, key, burying, removal } = await buryingInA('redriven-by-two')
  // B makes the pending record fresh; its removal of the letter waits.
  const slow = holdingLetterRemoval(store.storage)
  const b = createOutboxStore(slow.storage, new KeyedLock())
  const inB = b.redrive(record.id, Date.now(), 'instance-b')
  await slow.reached
  // C redrives the same letter meanwhile, and removes it.
  const c = createOutboxStore(store.storage, new KeyedLock())
  const inC = await c.redrive(record.id, Date.now(), 'instance-c')
  assert.ok(inC, 'C found the letter and put the event back')
  slow.release()
  const answers = [await inB, inC].map(answer => answer !== undefined)
  removal.release()
  await burying
  assert.equal(answers, [false, true], `both redrives answered true: ${JSON.stringify(answers)}`)
  assert.equal(await whereIs(store.storage, key, record.id), { pending: true, dead: false })
})

test('a letter discarded while a redrive makes its still pending event fresh: the redrive answers false, and the event is not kept for delivery', async () => {
  const { store, record, key, burying, removal } = await buryingInA('discarded-while-redriven')
  const slow = holdingLetterRemoval(store.storage)
  const b = createOutboxStore(slow.storage, new KeyedLock())
  const inB = b.redrive(record.id, Date.now(), 'instance-b')
  await slow.reached
  // The host discards the letter through C meanwhile.
  assert.ok(await createOutboxStore(store.storage, new KeyedLock()).discard(record.id), 'C discarded the letter')
  slow.release()
  const answer = await inB
  removal.release()
  await burying
  assert.is(answer, undefined, 'the redrive answered true for a letter the discard took first')
  const where = await whereIs(store.storage, key, record.id)
  assert.equal(where, { pending: false, dead: false }, `a discarded event was kept for delivery: ${JSON.stringify(where)}`)
})

test.run()
