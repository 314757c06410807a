import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { AsyncLocalStorage } from 'node:async_hooks'
import { withSharedAsyncContext } from '../../adapters/transport-baileys/shared-async-context.ts'

/**
 * Baileys makes an AsyncLocalStorage per socket; the adapter makes each a view onto one shared storage
 * (adapters/transport-baileys/shared-async-context.ts), so a process with many devices does not carry a
 * slot per socket in every promise and timer (bench/README.md, "Where the memory went").
 */
const shared = suite('one AsyncLocalStorage for every Baileys socket')

/** Symbol-keyed slots an enabled AsyncLocalStorage writes into a new promise (Node before 24). */
const slotsOfANewPromise = () => Object.getOwnPropertySymbols(new Promise(() => {})).filter(key => key.description === 'kResourceStore').length
const before24 = Number(process.versions.node.split('.')[0]) < 24

shared('storages made inside the call are views; the class is node own again once it returns', () => {
  const view = withSharedAsyncContext(() => new AsyncLocalStorage())
  assert.is(view instanceof AsyncLocalStorage, !before24)
  assert.ok(new AsyncLocalStorage() instanceof AsyncLocalStorage)
})

shared('each view keeps its own value through awaits and timers, nested runs and exit, as separate storages do', async () => {
  const [a, b] = [0, 1].map(() => withSharedAsyncContext(() => new AsyncLocalStorage<string>()))
  const seen: unknown[] = []
  await a.run('A', () =>
    b.run('B', async () => {
      await new Promise(resolve => setTimeout(resolve, 2))
      seen.push([a.getStore(), b.getStore()])
      await a.run('A2', async () => seen.push([a.getStore(), b.getStore()]))
      await b.exit(async () => seen.push([a.getStore(), b.getStore()]))
      seen.push([a.getStore(), b.getStore()])
    }),
  )
  await new Promise<void>(resolve => a.run('T', () => setTimeout(() => (seen.push([a.getStore(), b.getStore()]), resolve()), 1)))
  seen.push([a.getStore(), b.getStore()])
  assert.equal(seen, [
    ['A', 'B'],
    ['A2', 'B'],
    ['A', undefined],
    ['A', 'B'],
    ['T', undefined],
    [undefined, undefined],
  ])
})

shared('200 used storages add at most one slot to each new promise; 200 separate ones add 200', () => {
  const start = slotsOfANewPromise()
  const views = Array.from({ length: 200 }, () => withSharedAsyncContext(() => new AsyncLocalStorage<number>()))
  views.forEach((view, i) => view.run(i, () => assert.is(view.getStore(), i)))
  const withViews = slotsOfANewPromise()
  assert.ok(withViews - start <= 1, `${withViews - start} slots`)
  if (!before24) return
  const separate = Array.from({ length: 200 }, () => new AsyncLocalStorage<number>())
  separate.forEach(storage => storage.run(1, () => {}))
  const withSeparate = slotsOfANewPromise()
  separate.forEach(storage => storage.disable())
  assert.is(withSeparate - withViews, 200)
})

shared.run()
