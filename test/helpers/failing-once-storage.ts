import type { Storage } from '../../src/ports/storage.ts'
import { memoryStorage } from './memory-storage.ts'

/** The storage methods a test can make fail once. */
export type FailingMethod = 'set' | 'add' | 'delete' | 'increment' | 'compareAndSet'

/**
 * A memory store whose `method` rejects once (ECONNRESET) for a key starting with `prefix`, while
 * `state.armed` is set (from the start when `armed`); `lost`: the call is done first, then rejected,
 * as a write whose answer was lost on its way back.
 */
export function failingOnce(method: FailingMethod, prefix: string, { lost = false, armed = false } = {}) {
  const inner = memoryStorage()
  const state = { armed, failed: false }
  const storage = new Proxy(inner, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (name !== method || typeof value !== 'function') return value
      return async (key: string, ...rest: unknown[]) => {
        if (state.armed && !state.failed && key.startsWith(prefix)) {
          state.failed = true
          if (lost) await value.call(target, key, ...rest)
          throw new Error('ECONNRESET')
        }
        return value.call(target, key, ...rest)
      }
    },
  }) as Storage
  return { storage, state }
}
