import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { waitFor } from '../helpers/gateway.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { AGENT_DEVICE, agentsOver } from '../helpers/agent-runner.ts'
import { flowConversations } from '../../src/domain/flows.ts'
import type { AtomicStorage } from '../../src/ports/storage.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { StorageUnavailableError } from '../../src/store/guarded-storage.ts'

/**
 * A write of one answer lands but its answer is lost (the guarded store's time limit passed), and
 * before the answer tries again, another process (another KeyedLock, the same store) answers
 * another text of the same contact. `append` and `countReply` recognised only the last answer's
 * tag, so the retry added its turns again / counted its reply again; at the reply limit the
 * retry found the window full and the reply, counted already, was never sent.
 */
const test = suite('flows: a write that landed is recognised after another answer of the contact')

const CONTACT = '5511988887777'
const device = AGENT_DEVICE

/** A view of `inner` whose next `step` on a key starting with `prefix`, once armed, lands and then rejects (its answer lost). */
function losingAnswers(inner: AtomicStorage) {
  let armed: { step: string; prefix: string } | undefined
  const lost =
    <A extends unknown[], R>(name: string, call: (key: string, ...rest: A) => Promise<R>) =>
    async (key: string, ...rest: A): Promise<R> => {
      const result = await call(key, ...rest)
      if (armed?.step === name && key.startsWith(armed.prefix)) {
        armed = undefined
        throw new StorageUnavailableError(name, { cause: new Error('timed out (2000 ms)') })
      }
      return result
    }
  const storage: AtomicStorage = {
    ...inner,
    set: lost('set', inner.set),
    add: lost('add', inner.add),
    compareAndSet: lost('compareAndSet', inner.compareAndSet),
  }
  return { storage, arm: (step: string, prefix: string) => void (armed = { step, prefix }) }
}

test('append: the retry of a write that landed adds nothing, though another answer came in between', async () => {
  const shared = memoryStorage()
  const a = losingAnswers(shared)
  const [flowsA, flowsB] = [flowConversations(a.storage, new KeyedLock(), 20), flowConversations(shared.connectAgain(), new KeyedLock(), 20)]
  a.arm('compareAndSet', 'flow:')
  const turnsA = [
    { role: 'contact' as const, text: 'oi', at: 1 },
    { role: 'agent' as const, text: 're: oi', at: 2 },
  ]
  await flowsA.append(device.id, CONTACT, turnsA, 'answer-a').then(
    () => assert.unreachable('the answer was lost'),
    err => assert.instance(err, StorageUnavailableError),
  )
  await flowsB.append(
    device.id,
    CONTACT,
    [
      { role: 'contact', text: 'preço?', at: 3 },
      { role: 'agent', text: 're: preço?', at: 4 },
    ],
    'answer-b',
  )
  await flowsA.append(device.id, CONTACT, turnsA, 'answer-a') // the answer tries again
  const { turns } = await flowsB.history(device.id, CONTACT)
  assert.equal(
    turns.map(turn => turn.text),
    ['oi', 're: oi', 'preço?', 're: preço?'],
    'each turn once',
  )
})

test('countReply: the retry of a count that landed counts nothing more, though another answer came in between', async () => {
  const shared = memoryStorage()
  const a = losingAnswers(shared)
  const [flowsA, flowsB] = [flowConversations(a.storage, new KeyedLock(), 20), flowConversations(shared.connectAgain(), new KeyedLock(), 20)]
  a.arm('compareAndSet', 'flow-replies:')
  await flowsA.countReply(device.id, CONTACT, 10, 'answer-a').then(
    () => assert.unreachable('the answer was lost'),
    err => assert.instance(err, StorageUnavailableError),
  )
  assert.ok(await flowsB.countReply(device.id, CONTACT, 10, 'answer-b'))
  assert.ok(await flowsA.countReply(device.id, CONTACT, 10, 'answer-a'), 'counted already: true')
  assert.is((await flowsA.history(device.id, CONTACT)).replies, 2, 'two replies, each counted once')
})

test('agents: at the reply limit, a reply whose count landed (answer lost) is still sent after another process answered the contact', async () => {
  const shared = memoryStorage()
  const a = losingAnswers(shared)
  const [flowsA, flowsB] = [flowConversations(a.storage, new KeyedLock(), 20), flowConversations(shared.connectAgain(), new KeyedLock(), 20)]
  // Eight replies counted in this window already (by either process): two more are allowed.
  for (let i = 0; i < 8; i++) assert.ok(await flowsB.countReply(device.id, CONTACT, 10, `earlier-${i}`))
  const [processA, processB] = [agentsOver(flowsA, CONTACT), agentsOver(flowsB, CONTACT)]
  a.arm('compareAndSet', 'flow-replies:') // A's count (the 9th) lands, its answer is lost: A tries again after 1 s
  processA.receive('oi')
  await waitFor(() => a.storage !== undefined && processA.asked.length === 1, 2000, 'A asked its responder')
  await new Promise(resolve => setTimeout(resolve, 100)) // A's count failed; A waits 1 s to try again
  processB.receive('preço?') // B (the device's new holder, or a redelivery's receiver) answers the contact's next text: the 10th
  await waitFor(() => processB.sent.length === 1, 2000, 'B sent its reply')
  await waitFor(async () => (await flowsB.history(device.id, CONTACT)).turns.some(turn => turn.text === 'oi'), 5000, "A's answer kept (tried again)")
  assert.equal(processA.sent, ['re: oi'], "A's reply, counted in the window, was sent")
  assert.is((await flowsB.history(device.id, CONTACT)).replies, 10, 'ten replies counted, ten sent')
  await Promise.all([processA.runner.close(), processB.runner.close()])
})

test('agents: the history holds each turn once when an append landed (answer lost) and another process answered the contact meanwhile', async () => {
  const shared = memoryStorage()
  const a = losingAnswers(shared)
  const [flowsA, flowsB] = [flowConversations(a.storage, new KeyedLock(), 20), flowConversations(shared.connectAgain(), new KeyedLock(), 20)]
  const [processA, processB] = [agentsOver(flowsA, CONTACT), agentsOver(flowsB, CONTACT)]
  a.arm('compareAndSet', 'flow:') // A's turns land, the answer is lost: A tries again after 1 s
  processA.receive('oi')
  await waitFor(() => processA.sent.length === 1, 2000, 'A sent its reply')
  await new Promise(resolve => setTimeout(resolve, 100))
  processB.receive('preço?')
  await waitFor(() => processB.sent.length === 1, 2000, 'B sent its reply')
  await new Promise(resolve => setTimeout(resolve, 1500)) // A tried again
  const { turns } = await flowsB.history(device.id, CONTACT)
  assert.equal(
    turns.map(turn => turn.text),
    ['oi', 're: oi', 'preço?', 're: preço?'],
    'each turn once',
  )
  await Promise.all([processA.runner.close(), processB.runner.close()])
})

test.run()
