import { conformanceSuite } from '../helpers/conformance/suite.ts'
import { realStackWorld } from '../helpers/conformance/world.ts'

/**
 * The conformance suite (operations 3 to 23, the ten webhook kinds, acks) on the real Baileys stack
 * against the local WhatsApp peer: the same cases, bodies and answers as on the simulated network.
 */
conformanceSuite('real-stack', realStackWorld)
