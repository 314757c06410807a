import { randomBytes } from 'node:crypto'
import type { Storage } from '../ports/storage.ts'
import { atomicSteps } from './keyed-lock.ts'

/** Where the store's identity is kept. */
const KEY = 'store-id'

/**
 * The store's identity: a random id written once (by whichever process first asks, an atomic add) and
 * read by every process after. It names what this process keeps outside the store for it (the spill
 * files): a gateway on another store, sharing the folder, leaves them alone. Hex, no `-`.
 */
export async function storeIdentity(storage: Storage): Promise<string> {
  const existing = await storage.get<unknown>(KEY)
  if (typeof existing === 'string' && /^[0-9a-f]{16}$/.test(existing)) return existing
  const made = randomBytes(8).toString('hex')
  if (existing === undefined && (await atomicSteps(storage).add(KEY, made))) return made
  const stored = await storage.get<unknown>(KEY)
  if (typeof stored === 'string' && /^[0-9a-f]{16}$/.test(stored)) return stored
  throw new Error(`the store's "${KEY}" entry is not an id this gateway wrote (${JSON.stringify(stored)}): remove it`)
}
