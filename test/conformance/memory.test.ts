import { conformanceSuite } from '../helpers/conformance/suite.ts'
import { memoryWorld } from '../helpers/conformance/world.ts'

/** The conformance suite (operations 3 to 23, the ten webhook kinds, acks) on the simulated network. */
conformanceSuite('memory', memoryWorld)
