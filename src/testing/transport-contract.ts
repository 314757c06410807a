import type { ContractCase, ContractOptions, TransportHarness } from './contract-types.ts'
import { messageCases } from './contract-messages.ts'
import { sessionCases } from './contract-sessions.ts'

export type { ContractCase, ContractOptions, IncomingSpec, ReceiptRecord, SentRecord, TransportHarness } from './contract-types.ts'

/**
 * The Transport contract: behaviour every Transport shows, whatever network is behind it. Register it
 * with any runner: `transportContract((name, fn) => suite(name, fn), makeHarness)`.
 */
export function transportContract(
  test: (name: string, fn: () => Promise<void>) => void,
  makeHarness: () => Promise<TransportHarness>,
  options: ContractOptions = {},
): void {
  const it: ContractCase = (name, body, needs) => {
    if (needs && !options[needs]) return
    test(name, async () => {
      const h = await makeHarness()
      try {
        await body(h)
      } finally {
        await h.close()
      }
    })
  }

  sessionCases(it)
  messageCases(it)
}
