import type { Wiring } from './wiring.ts'

/** The wiring behind each gateway: never exported by an entry point, for the project's own tests and tools. */
const internals = new WeakMap<object, Wiring>()

/** Remember the wiring of a gateway (createGateway does, once). */
export function rememberInternals(gateway: object, wiring: Wiring): void {
  internals.set(gateway, wiring)
}

/** The wiring of a gateway made by createGateway (the domain services, the guarded store and transport). */
export function internalsOf(gateway: object): Wiring {
  const wiring = internals.get(gateway)
  if (!wiring) throw new Error('not a gateway made by createGateway')
  return wiring
}
