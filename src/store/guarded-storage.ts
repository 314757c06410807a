import type { Storage } from '../ports/storage.ts'
import { Deadlines } from './deadlines.ts'

/** The backing store failed (unreachable, timed out): answered 503 so the client retries. */
export class StorageUnavailableError extends Error {
  constructor(operation: string, options: { cause: unknown }) {
    super(`storage ${operation} failed`, options)
    this.name = 'StorageUnavailableError'
  }
}

/**
 * Wrap a storage so that every failure surfaces as StorageUnavailableError (with the original as
 * `cause`) and a call that hangs past `timeoutMs` fails instead of hanging the request. The atomic
 * steps are wrapped alike when the storage has them (a timed-out step may still have happened).
 */
export function guardStorage(storage: Storage, timeoutMs = 2_000): Storage {
  const deadlines = new Deadlines(timeoutMs)
  const guard = <T>(operation: string, work: () => Promise<T>): Promise<T> => {
    let attempt: Promise<T>
    try {
      attempt = work()
    } catch (cause) {
      attempt = Promise.reject(cause)
    }
    return deadlines.run(
      attempt.catch(cause => {
        throw cause instanceof StorageUnavailableError ? cause : new StorageUnavailableError(operation, { cause })
      }),
      () => new StorageUnavailableError(operation, { cause: new Error('timed out') }),
    )
  }
  const guarded: Storage = {
    get: key => guard('get', () => storage.get(key)),
    set: (key, value, ttlMs) => guard('set', () => storage.set(key, value, ttlMs)),
    delete: key => guard('delete', () => storage.delete(key)),
    async *list<T>(prefix: string): AsyncIterable<[string, T]> {
      try {
        yield* storage.list<T>(prefix)
      } catch (cause) {
        throw new StorageUnavailableError('list', { cause })
      }
    },
    ping: () => guard('ping', async () => storage.ping?.()),
    ...(storage.reach ? { reach: storage.reach } : {}),
    close: () => (storage.close ? storage.close() : Promise.resolve()),
  }
  // The atomic steps pass through when the storage has them; losing a race stays a plain false.
  const { add, compareAndSet, deleteIfEqual, increment } = storage
  if (add) guarded.add = (key, value, ttlMs) => guard('add', () => add.call(storage, key, value, ttlMs))
  if (compareAndSet) guarded.compareAndSet = (key, expected, next, ttlMs) => guard('compareAndSet', () => compareAndSet.call(storage, key, expected, next, ttlMs))
  if (deleteIfEqual) guarded.deleteIfEqual = (key, expected) => guard('deleteIfEqual', () => deleteIfEqual.call(storage, key, expected))
  if (increment) guarded.increment = (key, by, ttlMs) => guard('increment', () => increment.call(storage, key, by, ttlMs))
  return guarded
}
