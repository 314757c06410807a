import type { Storage } from '../../src/ports/storage.ts'

/** A store that fails every call (as an unreachable server) while `down`; `storage` wraps `inner`. */
export function switchable(inner: Storage): { storage: Storage; down: boolean } {
  const state = { down: false, storage: inner }
  const refuse = () => {
    if (state.down) throw new Error('ECONNREFUSED')
  }
  state.storage = new Proxy(inner, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function' || name === 'close') return value
      if (name === 'list')
        return async function* (...args: unknown[]) {
          refuse()
          yield* value.apply(target, args)
        }
      return async (...args: unknown[]) => (refuse(), value.apply(target, args))
    },
  })
  return state
}
