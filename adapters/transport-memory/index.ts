import { MemoryTransport } from './transport.ts'
import type { MemoryTransportOptions } from './transport.ts'

/**
 * A Transport over a simulated network: for tests, demos and development without a phone. In
 * process by default; with `simUrl`, on a simulator server that several gateway processes share.
 */
export function memoryTransport(options: MemoryTransportOptions = {}): MemoryTransport {
  return new MemoryTransport(options)
}

export { MemoryTransport } from './transport.ts'
export type { MemoryTransportOptions } from './transport.ts'
export type { StoredSession } from './session-state.ts'
export { MemoryNetwork } from './network.ts'
export { simulatorRoutes } from './sim-routes.ts'
export type { SimulatorRoutesOptions } from './sim-routes.ts'
export type { PhoneNetwork } from './phone-network.ts'
export { simulatorServer } from './sim-server.ts'
export type { SimulatorServer, SimulatorServerOptions } from './sim-server.ts'
export type { LinkTarget } from './sessions.ts'
export type { Traffic } from './post.ts'
export type { DeviceCredentials, Fault, InboxCard, InboxContent, InboxEntry, MemoryNetworkOptions, NetworkStats, PhoneMessage, PhoneProfile } from './types.ts'
