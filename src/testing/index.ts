/** zapgate/testing: the contract suites every Storage and Transport implementation runs, and their harness types. */
export { storageContract, type StorageContractOptions } from './storage-contract.ts'
export { transportContract, type TransportHarness, type SentRecord, type ReceiptRecord, type IncomingSpec, type ContractOptions } from './transport-contract.ts'
