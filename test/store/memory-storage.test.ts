import { suite } from 'uvu'
import { storageContract } from '../../src/testing/storage-contract.ts'
import { memoryStorage, type MemoryStorage } from '../helpers/memory-storage.ts'

// The Map storage most tests run on keeps the same contract as the real adapters, atomic steps included.
const contract = suite('test Map storage: storage contract')
storageContract(contract, async () => memoryStorage(), { connectAgain: async first => (first as MemoryStorage).connectAgain(), ping: false })
contract.run()
