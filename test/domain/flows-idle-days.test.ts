import { mock } from 'node:test'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { flowConversations } from '../../src/domain/flows.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import type { AtomicStorage } from '../../src/ports/storage.ts'

/**
 * A flow conversation is "kept 30 days after the last" turn (docs/decisions.md, README: "kept 30 idle
 * days"), one conversation whether a text names the contact by phone, LID or both. The store's own
 * expiry is what forgets, so the clock here is Date's (the memory store expires by it).
 */
const test = suite('flows: what the store keeps of a conversation while the contact writes')

const DAY = 86_400_000
const [DEVICE, PHONE, LID] = ['device-1', '5511988887777', '123456789012345@lid']

test.before.each(() => mock.timers.enable({ apis: ['Date'], now: Date.UTC(2025, 0, 1) }))
test.after.each(() => mock.timers.reset())

const turn = (text: string) => [{ role: 'contact' as const, text, at: Date.now() }]

test('a contact that writes every few days keeps its history by its LID alone, past 30 days from when its phone was first shown', async () => {
  const flows = flowConversations(memoryStorage(), new KeyedLock(), 20)
  assert.is(await flows.conversationOf(DEVICE, PHONE, LID), PHONE, 'a text showing phone and LID: the phone names the conversation')
  await flows.append(DEVICE, PHONE, turn('oi'), 'answer-1')
  for (let day = 10; day <= 40; day += 10) {
    mock.timers.setTime(Date.UTC(2025, 0, 1) + day * DAY)
    const conversation = await flows.conversationOf(DEVICE, undefined, LID) // the LID alone, as a text hiding the number shows it
    assert.is(conversation, PHONE, `day ${day}: the LID still names the phone's conversation (never idle more than 10 days)`)
    await flows.append(DEVICE, conversation!, turn(`day ${day}`), `answer-${day}`)
  }
  const { turns } = await flows.history(DEVICE, PHONE)
  assert.equal(
    turns.map(t => t.text),
    ['oi', 'day 10', 'day 20', 'day 30', 'day 40'],
  )
})

test('a turn is kept cut to 4,000 characters, counted as code points (limits.md, decisions.md): never half an emoji', async () => {
  const flows = flowConversations(memoryStorage(), new KeyedLock(), 20)
  const [emoji, odd] = ['🎉'.repeat(4_000), `a${'🎉'.repeat(4_000)}`]
  await flows.append(DEVICE, PHONE, [...turn(emoji), ...turn(odd)], 'answer-1')
  const { turns } = await flows.history(DEVICE, PHONE)
  assert.is([...turns[0]!.text].length, 4_000, 'a text of 4,000 emoji is kept whole')
  assert.is(turns[1]!.text, `a${'🎉'.repeat(3_999)}`, 'a longer one is cut after its 4,000th character')
  assert.not.match(turns[1]!.text, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/, 'no lone surrogate')
})

test("a turn kept under the LID while the contact's turns moved to its phone moves alone: the moved ones are not added twice", async () => {
  const shared = memoryStorage()
  let meanwhile: (() => Promise<void>) | undefined // run once right before the move deletes the LID's conversation
  const storage: AtomicStorage = {
    ...shared,
    async deleteIfEqual(key, expected) {
      const run = key.endsWith(`:${LID}`) ? meanwhile : undefined
      meanwhile = undefined
      await run?.()
      return shared.deleteIfEqual(key, expected)
    },
  }
  // Two answers at once, each under its own lock (one process locks a text by the LID alone and one showing the phone apart, by
  // their keys): the second answers a text by the LID alone while the first moves the turns.
  const [first, second] = [flowConversations(storage, new KeyedLock(), 20), flowConversations(shared.connectAgain(), new KeyedLock(), 20)]
  await first.append(DEVICE, LID, turn('oi'), 'answer-1') // the number hidden
  const hiddenAgain = await second.conversationOf(DEVICE, undefined, LID) // read before the phone is known
  meanwhile = () => second.append(DEVICE, hiddenAgain!, turn('ainda sem número'), 'answer-2')
  assert.is(await first.conversationOf(DEVICE, PHONE, LID), PHONE, 'the number shown')
  await first.append(DEVICE, PHONE, turn('com número'), 'answer-3')
  assert.is(await first.conversationOf(DEVICE, PHONE, LID), PHONE, 'the next text showing it moves what was left under the LID')
  const { turns } = await first.history(DEVICE, PHONE)
  assert.equal(turns.map(t => t.text).sort(), ['ainda sem número', 'com número', 'oi'], 'each turn once')
})

test.run()
