import type { Logger } from '../logger.ts'
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
 *
 * The time-out holds for a whole request, however many store calls it makes one after another:
 * once one call has waited `timeoutMs` the store is taken for hung, every call still waiting fails
 * at that moment, and new calls fail at once while the guard itself probes the store (its `ping`,
 * else a read) until it answers. An answer of the store (a value, not an error), to the probe or
 * to a call that already failed, ends that. So a request is answered 503 within `timeoutMs` (and
 * one sweep of the deadlines) of its first store call, and a process notices a hung store within
 * about `timeoutMs` of its first unanswered call.
 */
export function guardStorage(storage: Storage, timeoutMs = 2_000, logger?: Logger): Storage {
  const deadlines = new Deadlines(timeoutMs)
  /** Since when the store is taken for hung (undefined: it answers). */
  let hungSince: number | undefined
  let probing = false
  const answered = () => {
    logger?.info({ hungMs: Date.now() - hungSince! }, 'the store answers again')
    hungSince = undefined
  }
  const timedOut = (operation: string) => {
    if (hungSince === undefined) {
      hungSince = Date.now()
      logger?.warn({ operation, timeoutMs }, 'the store did not answer in time: the calls waiting on it fail now, new ones fail at once until it answers again')
      deadlines.expireAll()
      probe()
    }
    return new StorageUnavailableError(operation, { cause: new Error(`timed out (${timeoutMs} ms)`) })
  }
  /** While the store is taken for hung, ask it (one probe at a time) until it answers. */
  const probe = () => {
    if (probing || hungSince === undefined) return
    probing = true
    let over = false
    // An answer ends the hang, even a late one; an error or no answer in time: ask again after a
    // pause (an error is no sign of health: a driver's own time-out fails so).
    const finish = (answer: boolean) => {
      if (answer && hungSince !== undefined) answered()
      if (over) return
      over = true
      done()
      probing = false
      if (!answer) setTimeout(probe, Math.min(250, Math.ceil(timeoutMs / 8))).unref()
    }
    const done = deadlines.watch(() => finish(false))
    let attempt: Promise<unknown>
    try {
      attempt = storage.ping ? storage.ping() : storage.get(PROBE_KEY)
    } catch (cause) {
      attempt = Promise.reject(cause)
    }
    attempt.then(
      () => finish(true),
      () => finish(false),
    )
  }
  const guard = <T>(operation: string, work: () => Promise<T>): Promise<T> => {
    if (hungSince !== undefined)
      return Promise.reject(
        new StorageUnavailableError(operation, { cause: new Error('the store is not answering (a call timed out and none has been answered since)') }),
      )
    let attempt: Promise<T>
    try {
      attempt = work()
    } catch (cause) {
      attempt = Promise.reject(cause)
    }
    return new Promise<T>((resolve, reject) => {
      const done = deadlines.watch(() => reject(timedOut(operation)))
      // An answer, in time or late, shows that the store is there again (an error does not: a driver's own time-out is one).
      attempt.then(
        value => {
          done()
          if (hungSince !== undefined) answered()
          resolve(value)
        },
        cause => {
          done()
          reject(cause instanceof StorageUnavailableError ? cause : new StorageUnavailableError(operation, { cause }))
        },
      )
    })
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
  if (compareAndSet)
    guarded.compareAndSet = (key, expected, next, ttlMs) => guard('compareAndSet', () => compareAndSet.call(storage, key, expected, next, ttlMs))
  if (deleteIfEqual) guarded.deleteIfEqual = (key, expected) => guard('deleteIfEqual', () => deleteIfEqual.call(storage, key, expected))
  if (increment) guarded.increment = (key, by, ttlMs) => guard('increment', () => increment.call(storage, key, by, ttlMs))
  return guarded
}

/** The key the guard reads to find out whether a hung store (one without `ping`) answers again. */
const PROBE_KEY = '__zapgate_probe__'
