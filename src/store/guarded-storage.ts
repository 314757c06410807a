import type { Logger } from '../logger.ts'
import { atomicSteps, type Storage } from '../ports/storage.ts'
import { Deadlines, invoke } from './deadlines.ts'

/** The backing store failed (unreachable, timed out): answered 503 so the client retries. */
export class StorageUnavailableError extends Error {
  constructor(operation: string, options: { cause: unknown }) {
    super(`storage ${operation} failed`, options)
    this.name = 'StorageUnavailableError'
  }
}

/** Wrap a storage: failures are StorageUnavailableError; after `timeoutMs` the store is taken for hung until a probe is answered (docs/limits.md). `onAnswer`: the first answer after a failure. */
export function guardStorage(storage: Storage, timeoutMs = 2_000, logger?: Logger, onAnswer?: () => void): Storage {
  const deadlines = new Deadlines(timeoutMs)
  let hungSince: number | undefined
  let probing = false
  let failed = false // a call failed (one timing out: hungSince), and none has been answered since
  const answered = () => {
    if (!failed && hungSince === undefined) return
    if (hungSince !== undefined) logger?.info({ hungMs: Date.now() - hungSince }, 'the store answers again')
    hungSince = undefined
    failed = false
    onAnswer?.()
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
  // One probe at a time; an answer ends the hang, even a late one; an error or no answer in time: ask again after a pause.
  const probe = () => {
    if (probing || hungSince === undefined) return
    probing = true
    let over = false
    const finish = (answer: boolean) => {
      if (answer) answered()
      if (over) return
      over = true
      done()
      probing = false
      if (!answer) setTimeout(probe, Math.min(250, Math.ceil(timeoutMs / 8))).unref()
    }
    const done = deadlines.watch(() => finish(false))
    invoke(() => (storage.ping ? storage.ping() : storage.get(PROBE_KEY))).then(
      () => finish(true),
      () => finish(false),
    )
  }
  const guard = <T>(operation: string, work: () => Promise<T>): Promise<T> => {
    if (hungSince !== undefined)
      return Promise.reject(
        new StorageUnavailableError(operation, { cause: new Error('the store is not answering (a call timed out and none has been answered since)') }),
      )
    return new Promise<T>((resolve, reject) => {
      const done = deadlines.watch(() => reject(timedOut(operation)))
      invoke(work).then(
        value => (done(), answered(), resolve(value)),
        cause => (done(), (failed = true), reject(cause instanceof StorageUnavailableError ? cause : new StorageUnavailableError(operation, { cause }))),
      )
    })
  }
  const guarded: Storage = {
    get: key => guard('get', () => storage.get(key)),
    set: (key, value, ttlMs) => guard('set', () => storage.set(key, value, ttlMs)),
    delete: key => guard('delete', () => storage.delete(key)),
    async *list<T>(prefix: string): AsyncIterable<[string, T]> {
      const items = await guard('list', async () => storage.list<T>(prefix)[Symbol.asyncIterator]()) // each page under the time-out, as every call
      try {
        for (let step; !(step = await guard('list', () => items.next())).done;) yield step.value
      } finally {
        void items.return?.()?.catch(() => {}) // not awaited: after a time-out the page it would wait for never comes
      }
    },
    ping: () => guard('ping', async () => void (await (storage.ping ? storage.ping() : storage.get(PROBE_KEY)))), // a store without ping: a read
    ...(storage.reach ? { reach: storage.reach } : {}),
    close: () => (storage.close ? storage.close() : Promise.resolve()),
  }
  for (const step of atomicSteps) {
    const call = storage[step] as ((...args: unknown[]) => Promise<unknown>) | undefined
    if (call) (guarded as unknown as Record<string, unknown>)[step] = (...args: unknown[]) => guard(step, () => call.apply(storage, args))
  }
  return guarded
}

/** The key the guard reads to find out whether a hung store (one without `ping`) answers again. */
const PROBE_KEY = '__zapgate_probe__'
