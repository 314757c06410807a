/** What a retry buffer hands its items to in the tests: a store that refuses everything while `down` (as it starts), and records what it took, in order. */
export function flakyStore() {
  const store = { down: true, taken: [] as number[] }
  const process = async (item: number) => {
    if (store.down) throw new Error('store down')
    store.taken.push(item)
  }
  return { store, process }
}
