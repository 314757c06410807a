import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { waitFor } from '../helpers/gateway.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { AGENT_DEVICE, agentsOver } from '../helpers/agent-runner.ts'
import { flowConversations } from '../../src/domain/flows.ts'
import type { Storage } from '../../src/ports/storage.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { StorageUnavailableError } from '../../src/store/guarded-storage.ts'

/**
 * The store fails under an agent's answer (after the text was taken, so no other process answers
 * it): the answer is tried again once the store is back, from where it stopped. Before, it was logged
 * and the contact never answered. The responder is asked once and the reply sent once, whatever step
 * the store failed at; the conversation holds each turn once.
 */
const test = suite('agents: an answer tried again while the store fails under it')

const CONTACT = '5511988887777'
const device = AGENT_DEVICE

/** A store whose `calls` on keys starting with `prefix` fail (as the guarded store reports an outage) for `ms` from the first such call; `landed`: each failing write is done first (its answer lost, as when the store's time limit passed). */
function failingFor(prefix: string, ms: number, calls: string[] = ['get', 'set', 'add', 'compareAndSet'], landed = false, failures = { count: 0 }): Storage {
  const store = memoryStorage()
  let since: number | undefined
  const down = (name: string, key: string) => {
    if (!key.startsWith(prefix) || !calls.includes(name)) return false
    since ??= Date.now()
    return Date.now() - since < ms && ++failures.count > 0
  }
  const guard =
    <A extends unknown[], R>(name: string, call: (key: string, ...rest: A) => Promise<R>) =>
    (key: string, ...rest: A): Promise<R> =>
      !down(name, key)
        ? call(key, ...rest)
        : (landed ? call(key, ...rest) : Promise.resolve()).then(() =>
            Promise.reject(new StorageUnavailableError(name, { cause: new Error('connection lost') })),
          )
  return {
    ...store,
    get: guard('get', store.get.bind(store)),
    set: guard('set', store.set.bind(store)),
    add: guard('add', store.add!.bind(store)),
    compareAndSet: guard('compareAndSet', store.compareAndSet!.bind(store)),
  } as Storage
}

for (const [step, prefix, calls, landed] of [
  ['reading the history', 'flow:', ['get'], false],
  ['counting the reply', 'flow-replies:', ['add', 'compareAndSet'], false],
  ['keeping the turns', 'flow:', ['add', 'compareAndSet', 'set'], false],
  ['taking the text (the take landed, its answer lost)', 'flow-taken:', ['add', 'compareAndSet', 'set'], true],
  ['counting the reply (the count landed, its answer lost)', 'flow-replies:', ['add', 'compareAndSet', 'set'], true],
  ['keeping the turns (the write landed, its answer lost)', 'flow:', ['add', 'compareAndSet', 'set'], true],
] as const)
  test(`the store down while ${step} (1.5 s): the reply is sent once, the responder asked once, each turn kept once, the reply counted once`, async () => {
    const failures = { count: 0 }
    const flows = flowConversations(failingFor(prefix, 1500, [...calls], landed, failures), new KeyedLock(), 20)
    const { runner, asked, sent, receive } = agentsOver(flows, CONTACT)
    receive('oi')
    await waitFor(() => sent.length > 0, 8000, 'the reply, once the store is back')
    await waitFor(async () => (await flows.history(device.id, CONTACT)).turns.length === 2, 8000, 'the turns kept')
    assert.equal(sent, ['re: oi'])
    assert.equal(asked, ['oi'], 'the responder asked once')
    const { turns, replies } = await flows.history(device.id, CONTACT)
    assert.equal(
      turns.map(turn => turn.text),
      ['oi', 're: oi'],
    )
    assert.is(replies, 1, 'the reply counted once in its window')
    assert.ok(failures.count > 0, 'the store did fail under the answer')
    await runner.close()
  })

test('a closing gateway stops waiting to try again: close() resolves at once, nothing sent', async () => {
  const flows = flowConversations(failingFor('flow:', 60_000), new KeyedLock(), 20)
  const { runner, sent, receive } = agentsOver(flows, CONTACT)
  receive('oi')
  await new Promise(resolve => setTimeout(resolve, 100)) // the first try failed; waiting 1 s to try again
  const started = Date.now()
  await runner.close()
  assert.ok(Date.now() - started < 500, `close() waited ${Date.now() - started} ms`)
  assert.equal(sent, [])
})

test.run()
