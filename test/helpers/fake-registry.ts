/** The part of the instance registry that DeviceLeases reads (tests of device leases): `alive` other instances, those whose record still `beats`, a fence to fire by hand. */
export function fakeRegistry() {
  const fenced: (() => void)[] = []
  const registry = {
    id: 'instance-a',
    standing: true,
    fenceCount: 0,
    alive: new Set<string>(),
    beats: new Set<string>(),
    /** The ids confirmGone was asked about. */
    asked: [] as string[],
    isAlive: (id: string) => id === registry.id || registry.alive.has(id),
    confirmGone: async (id: string) => (registry.asked.push(id), !registry.beats.has(id)),
    setLoad: () => {},
    liveRecords: [],
    get view() {
      return registry
    },
    events: { on: (_event: 'fence', listener: () => void) => void fenced.push(listener) },
    fence() {
      registry.fenceCount++
      for (const listener of fenced) listener()
    },
  }
  return registry
}
