import * as assert from 'uvu/assert'
import { TransportError } from '../../src/ports/transport.ts'

/** Assert that `promise` rejects with a TransportError (of `code`, when given); resolves with that error. */
export async function transportRejection(promise: Promise<unknown>, code?: TransportError['code']): Promise<TransportError> {
  let rejected: unknown
  const failed = await promise.then(
    () => false,
    (error: unknown) => ((rejected = error), true),
  )
  assert.ok(failed, `expected a rejection${code ? ` with ${code}` : ''}`)
  assert.instance(rejected, TransportError, String(rejected))
  if (code !== undefined) assert.is((rejected as TransportError).code, code, (rejected as Error).message)
  return rejected as TransportError
}
