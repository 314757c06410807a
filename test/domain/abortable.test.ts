import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { abortable } from '../../src/domain/abortable.ts'
import { rejectionOf } from '../helpers/rejection.ts'

const test = suite('abortable: giving up on work without losing track of it (the webhook attempts cut short by shutdown)')

/** Unhandled rejections seen while `run` goes on (and a little after). */
async function unhandledDuring(run: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = []
  const listener = (reason: unknown) => seen.push(reason)
  process.on('unhandledRejection', listener)
  try {
    await run()
    await new Promise(resolve => setTimeout(resolve, 50))
  } finally {
    process.off('unhandledRejection', listener)
  }
  return seen
}

const later = (ms: number, error: Error) => new Promise<never>((_, reject) => setTimeout(() => reject(error), ms))

test('abort() rejects every pending run with its reason; work that settles first keeps its result', async () => {
  const cancellation = new AbortController()
  const done = abortable(Promise.resolve('done'), cancellation.signal)
  const pending = abortable(new Promise(() => {}), cancellation.signal)
  assert.is(await done, 'done')
  const reason = new Error('stopping')
  cancellation.abort(reason)
  assert.is(await rejectionOf(pending), reason)
})

test('work handed to abortable() after abort() is rejected at once, and its own later failure is not an unhandled rejection', async () => {
  const cancellation = new AbortController()
  cancellation.abort(new Error('stopping'))
  let rejected: Error | undefined
  const seen = await unhandledDuring(async () => {
    rejected = await rejectionOf(abortable(later(10, new Error('the sender gave up')), cancellation.signal))
  })
  assert.is(rejected?.message, 'stopping')
  assert.equal(seen, [])
})

test('work given to abortable() with an aborted signal fails later without an unhandled rejection', async () => {
  const controller = new AbortController()
  controller.abort(new Error('aborted first'))
  let rejected: Error | undefined
  const seen = await unhandledDuring(async () => {
    rejected = await rejectionOf(abortable(later(10, new Error('the responder failed')), controller.signal))
  })
  assert.is(rejected?.message, 'aborted first')
  assert.equal(seen, [])
})

test.run()
