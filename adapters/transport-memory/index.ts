import { MemoryTransport } from './transport.ts'
import type { MemoryTransportOptions } from './transport.ts'

/** A Transport over a simulated network: for tests, demos and development without a phone. */
export function memoryTransport(options: MemoryTransportOptions = {}): MemoryTransport {
  return new MemoryTransport(options)
}

export { MemoryTransport } from './transport.ts'
export type { MemoryTransportOptions, StoredSession } from './transport.ts'
export { MemoryNetwork } from './network.ts'
export { simulatorRoutes } from './sim-routes.ts'
export type { SimulatorRoutesOptions } from './sim-routes.ts'
export type { LinkTarget } from './sessions.ts'
export type { Traffic } from './post.ts'
export type { Fault, InboxCard, InboxContent, InboxEntry, MemoryNetworkOptions, PhoneMessage, PhoneProfile } from './types.ts'
