import { createRequire } from 'node:module'
import type { AsyncLocalStorage } from 'node:async_hooks'

// Why this file exists (bench/README.md, "Where the memory went"): Baileys makes an AsyncLocalStorage per
// socket (`addTransactionCapability`) and never disables it. Before Node 24, every enabled
// AsyncLocalStorage writes its own slot into every promise and timer created afterwards, so each async
// operation of the process costs memory and CPU in proportion to the sockets ever made: 17 KB per Timeout
// at 220 devices, and linking slower with every device already linked. Here each socket's storage is a
// view onto one shared AsyncLocalStorage whose store maps each view to its value: one slot per resource,
// whatever the number of sockets, with the same isolation as separate storages.

const builtin: { AsyncLocalStorage: typeof AsyncLocalStorage } = createRequire(import.meta.url)('node:async_hooks')
const syncBuiltins: () => void = createRequire(import.meta.url)('node:module').syncBuiltinESMExports
const RealStorage = builtin.AsyncLocalStorage
const shared = new RealStorage<ReadonlyMap<object, unknown>>()

/** Node 24 keeps no slot per storage and resource (AsyncContextFrame), so there is nothing to share. */
const needed = Number(process.versions.node.split('.')[0]) < 24

/** The current stores with `owner`'s value set (or removed, for `undefined`). */
function withValue(owner: object, value: unknown): ReadonlyMap<object, unknown> {
  const next = new Map(shared.getStore())
  if (value === undefined) next.delete(owner)
  else next.set(owner, value)
  return next
}

/** An AsyncLocalStorage that keeps its value in the shared storage: the same API, one slot for all. */
class SharedSlotStorage<T> {
  static bind = RealStorage.bind
  static snapshot = RealStorage.snapshot

  getStore(): T | undefined {
    return shared.getStore()?.get(this) as T | undefined
  }

  run<R, A extends unknown[]>(store: T, callback: (...args: A) => R, ...args: A): R {
    return shared.run(withValue(this, store), callback, ...args)
  }

  exit<R, A extends unknown[]>(callback: (...args: A) => R, ...args: A): R {
    return shared.run(withValue(this, undefined), callback, ...args)
  }

  enterWith(store: T): void {
    shared.enterWith(withValue(this, store))
  }

  disable(): void {
    if (shared.getStore()?.has(this)) shared.enterWith(withValue(this, undefined))
  }
}

/**
 * Calls `make` (synchronously) with `new AsyncLocalStorage()` giving views onto one shared storage, for
 * code that makes a storage per object (Baileys' sockets). `AsyncLocalStorage` is swapped in node's
 * builtin module only for the length of the call and put back before it returns; on Node 24 and later
 * `make` runs as it is.
 */
export function withSharedAsyncContext<T>(make: () => T): T {
  if (!needed) return make()
  builtin.AsyncLocalStorage = SharedSlotStorage as unknown as typeof AsyncLocalStorage
  syncBuiltins()
  try {
    return make()
  } finally {
    builtin.AsyncLocalStorage = RealStorage
    syncBuiltins()
  }
}
