import { suite } from 'uvu'
import { transportContract } from '../../src/testing/transport-contract.ts'
import { baileysHarness } from '../helpers/baileys-harness.ts'

const contract = suite('Baileys transport: the shared transport contract (fake socket)')
transportContract(
  (name, fn) => contract(name, fn),
  () => baileysHarness(),
  { validatesTargets: true },
)
contract.run()
