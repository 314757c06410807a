import type { AuthenticationCreds, SignalDataSet, SignalDataTypeMap, SignalKeyStoreWithTransaction } from '@whiskeysockets/baileys'

/**
 * An in-memory signal key store (sessions, pre-keys, identities, sender keys, LID mappings) for one
 * phone of the peer, in the shape Baileys' signal repository reads and writes.
 */
export function memoryKeyStore(): SignalKeyStoreWithTransaction {
  const data = new Map<string, Map<string, unknown>>()
  const table = (type: string) => {
    let map = data.get(type)
    if (!map) data.set(type, (map = new Map()))
    return map
  }
  return {
    async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
      const map = table(type)
      const found: { [id: string]: SignalDataTypeMap[T] } = {}
      for (const id of ids) if (map.has(id)) found[id] = map.get(id) as SignalDataTypeMap[T]
      return found
    },
    async set(set: SignalDataSet) {
      for (const [type, values] of Object.entries(set)) {
        const map = table(type)
        for (const [id, value] of Object.entries(values ?? {})) {
          if (value === null || value === undefined) map.delete(id)
          else map.set(id, value)
        }
      }
    },
    async clear() {
      data.clear()
    },
    isInTransaction: () => false,
    transaction: exec => exec(),
  }
}

/** The signal half of a phone's credentials (identity, signed pre-key, registration id). */
export type PhoneCreds = Pick<AuthenticationCreds, 'signedIdentityKey' | 'signedPreKey' | 'registrationId'>
