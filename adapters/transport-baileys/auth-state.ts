import PQueue from 'p-queue'
import type { AuthenticationCreds, AuthenticationState, SignalDataSet, SignalDataTypeMap, SignalKeyStore } from '@whiskeysockets/baileys'
import type { Storage } from 'zapgate'
import { BoundedMap } from 'zapgate/adapter-kit'
import type { BaileysModule } from './types.ts'

/**
 * A device's Baileys auth state kept in the Storage port (never in files): the creds under
 * `<prefix>creds` and every signal key under `<prefix>key:<type>:<id>`, each serialised with BufferJSON
 * so that Buffers come back as Buffers.
 */
export interface StoredAuthState {
  /** The creds (Baileys mutates them in place) and the raw signal key store (wrap it in a cache). */
  readonly state: AuthenticationState
  /** Whether the creds belong to a linked account: `creds.account` is set on pair-success. */
  paired(): boolean
  /** Persist the whole creds (call on every creds.update: Baileys has already merged the update in). */
  saveCreds(): Promise<void>
  /** Read the creds again from the store, after the writes under way (another instance may have run the device since). */
  reload(): Promise<void>
  /** Start over with fresh creds and no keys (before a new link). */
  reset(): Promise<void>
  /** Delete the creds and every key; later writes from a dying socket are dropped. */
  clear(): Promise<void>
  /** Resolve once every credential and key write started so far has reached the store. */
  flush(): Promise<void>
  /**
   * The key store to hand one socket, over `keys` (the state's keys behind the signal key cache). Its writes are dropped, before
   * they reach the cache, once `retireSockets()` is called (the device left this instance) or the keys are wiped (`clear`,
   * `reset`); and a key a later socket of this instance wrote is never written again by an earlier one (Baileys retries a failed
   * commit after its socket ended: a 428, a 515 restart), while the earlier socket's other keys still land.
   */
  socketKeys(keys: SignalKeyStore): SignalKeyStore
  /** Drop every later key write of the sockets handed keys so far (Baileys commits a transaction, and retries a failed commit, after its socket ended). */
  retireSockets(): void
}

/** Load (or create in memory) the auth state stored under `prefix`. */
export async function loadAuthState(storage: Storage, prefix: string, lib: BaileysModule): Promise<StoredAuthState> {
  const encode = (value: unknown) => JSON.stringify(value, lib.BufferJSON.replacer)
  const decode = (text: unknown) => (typeof text === 'string' ? JSON.parse(text, lib.BufferJSON.reviver) : undefined)
  const credsKey = `${prefix}creds`
  const keyOf = (type: string, id: string) => `${prefix}key:${type}:${id}`
  let cleared = false
  let writes: Promise<unknown> = Promise.resolve()
  const queue = (write: () => Promise<unknown>) => (writes = writes.then(write, write))
  const keyWrites = new Set<Promise<unknown>>()
  /** The last creds write failed: the store has older creds than the socket runs with (retried by the next save, at the latest by flush). */
  let credsUnsaved = false
  let socketEpoch = 0
  let socketSeq = 0
  /** `type:id` to the number of the latest socket that wrote it, for as long as an older socket may still commit. */
  const lastWriter = new BoundedMap<string, number>(50_000, LATE_COMMIT_WINDOW_MS)
  const writeCreds = async () => {
    if (cleared) return
    try {
      await storage.set(credsKey, encode(state.creds))
      credsUnsaved = false
    } catch (error) {
      credsUnsaved = true
      throw error
    }
  }

  const storedCreds = async () => (decode(await storage.get(credsKey)) as AuthenticationCreds | undefined) ?? lib.initAuthCreds()

  const state: AuthenticationState = {
    creds: await storedCreds(),
    keys: {
      async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
        const found: { [id: string]: SignalDataTypeMap[T] } = {}
        await Promise.all(
          ids.map(async id => {
            let value = decode(await storage.get(keyOf(type, id)))
            if (value != null && type === 'app-state-sync-key') value = lib.proto.Message.AppStateSyncKeyData.fromObject(value)
            if (value != null) found[id] = value
          }),
        )
        return found
      },
      async set(data: SignalDataSet) {
        if (cleared) return
        const ops: Promise<unknown>[] = []
        for (const [type, entries] of Object.entries(data)) {
          for (const [id, value] of Object.entries(entries ?? {})) {
            ops.push(value == null ? storage.delete(keyOf(type, id)) : storage.set(keyOf(type, id), encode(value)))
          }
        }
        const all = Promise.all(ops)
        keyWrites.add(all)
        try {
          await all
        } finally {
          keyWrites.delete(all)
        }
      },
    },
  }

  return {
    state,
    paired: () => Boolean(state.creds.account),
    saveCreds: () => queue(writeCreds).then(() => undefined),
    async reload() {
      // The previous socket's key writes under way land first: the caller drops its key cache next, and the new socket reads the store.
      await Promise.allSettled([...keyWrites])
      await queue(async () => {
        state.creds = await storedCreds()
        credsUnsaved = false
      })
    },
    async reset() {
      cleared = true
      socketEpoch++ // the wiped account's sockets write no key again, after the reset either
      await Promise.allSettled([...keyWrites])
      await queue(() => deleteByPrefix(storage, prefix))
      state.creds = lib.initAuthCreds()
      cleared = false
      await queue(() => storage.set(credsKey, encode(state.creds)))
    },
    async clear() {
      cleared = true
      socketEpoch++
      await Promise.allSettled([...keyWrites]) // a write already on its way would land after the delete
      await queue(() => deleteByPrefix(storage, prefix))
      state.creds = lib.initAuthCreds()
    },
    socketKeys(keys) {
      const [epoch, seq] = [socketEpoch, ++socketSeq]
      return {
        get: (type, ids) => keys.get(type, ids),
        async set(data) {
          if (epoch !== socketEpoch) return
          const kept: SignalDataSet = {}
          let count = 0
          for (const [type, entries] of Object.entries(data) as [keyof SignalDataSet, Record<string, unknown>][]) {
            for (const [id, value] of Object.entries(entries ?? {})) {
              const key = `${type}:${id}`
              if ((lastWriter.get(key) ?? 0) > seq) continue // a later socket's value stands
              lastWriter.set(key, seq)
              ;((kept[type] ??= {}) as Record<string, unknown>)[id] = value
              count++
            }
          }
          if (count > 0) await keys.set(kept)
        },
      }
    },
    retireSockets() {
      socketEpoch++
    },
    async flush() {
      await Promise.allSettled([writes, ...keyWrites])
      if (credsUnsaved) await queue(writeCreds).catch(() => undefined)
    },
  }
}

/** The phone number (digits) of the linked account stored under `prefix`, without loading Baileys. */
export async function storedPhone(storage: Storage, prefix: string): Promise<string | undefined> {
  const text = await storage.get<string>(`${prefix}creds`)
  if (typeof text !== 'string') return undefined
  const creds = JSON.parse(text) as { me?: { id?: string }; account?: unknown }
  const user = creds.account ? creds.me?.id?.split('@')[0].split(':')[0] : undefined
  return user && /^\d+$/.test(user) ? user : undefined
}

/**
 * Delete every entry whose key starts with `prefix` (listed first, then deleted, DELETE_CONCURRENCY at
 * a time). A linked device keeps about 850 keys (812 pre-keys at first); deleting them all at once
 * queued hundreds of writes on a SQLite store, whose last ones then waited past the store's time-out
 * and failed, with the instance's heartbeat stuck behind them (found on the real stack: a 401 after a
 * restart never reported logged-out).
 */
export async function deleteByPrefix(storage: Storage, prefix: string): Promise<number> {
  const keys: string[] = []
  for await (const [key] of storage.list(prefix)) keys.push(key)
  await new PQueue({ concurrency: DELETE_CONCURRENCY }).addAll(keys.map(key => () => storage.delete(key)))
  return keys.length
}

/** How long an ended socket may still commit keys: Baileys retries a failed commit 10 times, 3 s apart (transactionOpts), and more. */
const LATE_COMMIT_WINDOW_MS = 5 * 60_000

/** How many deletes of one clear the store gets at a time. */
const DELETE_CONCURRENCY = 8
