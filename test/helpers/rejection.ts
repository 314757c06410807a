import * as assert from 'uvu/assert'

/**
 * The error `promise` rejects with; fails the test (naming `what`) when it resolves or rejects with a
 * non-Error. Assert on the result after it: an assertion inside a `catch` or `.catch()` would also
 * catch the failure of "it did not reject", or never run at all.
 */
export async function rejectionOf(promise: Promise<unknown>, what = 'the promise'): Promise<Error> {
  const outcome = await promise.then(
    value => ({ resolved: value }),
    (err: unknown) => ({ rejected: err }),
  )
  if ('resolved' in outcome) assert.unreachable(`${what} resolved with ${String(outcome.resolved)} instead of rejecting`)
  const { rejected } = outcome as { rejected: unknown }
  if (!(rejected instanceof Error)) assert.unreachable(`${what} rejected with a non-Error: ${String(rejected)}`)
  return rejected as Error
}
