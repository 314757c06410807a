import { memoryStorage } from './memory-storage.ts'
import type { AtomicStorage } from '../../src/ports/storage.ts'

/** A pausingStore: its storage, `pause` and `keys`. */
export type PausingStore = ReturnType<typeof pausingStore>

/** A memory store (for races of a deletion with a write) whose next write `step` (set, delete or an atomic step) of a key starting with `prefix` waits, once `pause` armed it, until released. */
export function pausingStore() {
  const inner = memoryStorage()
  let gate: { step: string; prefix: string; reached: () => void; released: Promise<void> } | undefined
  const held =
    <A extends unknown[], R>(name: string, step: (key: string, ...rest: A) => Promise<R>) =>
    async (key: string, ...rest: A): Promise<R> => {
      if (gate?.step === name && key.startsWith(gate.prefix)) {
        const { reached, released } = gate
        gate = undefined
        reached()
        await released
      }
      return step(key, ...rest)
    }
  const storage: AtomicStorage = {
    ...inner,
    set: held('set', inner.set),
    delete: held('delete', inner.delete),
    add: held('add', inner.add),
    compareAndSet: held('compareAndSet', inner.compareAndSet),
    deleteIfEqual: held('deleteIfEqual', inner.deleteIfEqual),
  }
  return {
    storage,
    /** Hold the next `step` of a `prefix` key: `reached` resolves when it is held, `release` lets it through. */
    pause(step: 'set' | 'delete', prefix: string) {
      let release!: () => void
      let reached!: () => void
      const held = { reached: new Promise<void>(resolve => (reached = resolve)), release: () => release() }
      gate = { step, prefix, reached, released: new Promise<void>(resolve => (release = resolve)) }
      return held
    },
    /** Stored keys starting with `prefix`. */
    async keys(prefix: string): Promise<string[]> {
      const keys: string[] = []
      for await (const [key] of inner.list(prefix)) keys.push(key)
      return keys
    },
  }
}
