import { randomBytes } from 'node:crypto'
import type { Liveness } from '../../src/domain/instances.ts'

/** The liveness of a process alone with its store (tests of parts that take claims): only itself is alive. */
export function soloLiveness(id = `solo-${randomBytes(4).toString('hex')}`): Liveness {
  return { id, isAlive: instanceId => instanceId === id, onDeparture() {} }
}
