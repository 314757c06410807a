import { randomBytes, randomUUID } from 'node:crypto'
import { GatewayError, isGatewayError } from '../errors.ts'
import { hashKey, randomDigits, randomKey, safeEqual } from '../security/keys.ts'
import { Collection } from '../store/collection.ts'
import { UniqueIndex } from '../store/unique-index.ts'
import type { CacheEpoch } from '../store/cache-epoch.ts'
import type { KeyedLock } from '../store/keyed-lock.ts'
import type { Storage } from '../ports/storage.ts'
import type { LinkChallenge, SessionState, SessionStatus, Transport } from '../ports/transport.ts'
import type { Logger } from '../logger.ts'
import type { Account } from './accounts.ts'
import type { GatewayEvents } from '../events.ts'

/** A device (a session on the messaging network) as stored. */
export interface Device {
  id: string
  accountId: string
  name: string
  appkeyHash: string
  /** The appkey is the device name (chosen with `setAppkey`), so it may be shown again. */
  appkeyIsName: boolean
  webhookUrl?: string
  /** Standard Webhooks signing secret, `whsec_<base64>`. */
  webhookSecret: string
  /** Which webhook events are on (operation 20). */
  webhookEvents: { chat: boolean; group: boolean }
  /** Last known session facts, kept in step with the transport's status events. */
  phone?: string
  connected: boolean
  state: SessionState
  /** Linked once and not logged out (nor linked anew) since: resumed when the gateway starts. */
  linked: boolean
  /** Hashes of the QR share link tokens. */
  shareTokens: string[]
  /** Agents hosted by the device, oldest first; the last one answers. */
  agentIds: string[]
  createdAt: number
  /** Set (by compare-and-set) when its deletion starts: from then on no agent, share link or scheduled message is added to it. Taken back when the network logout fails (nothing removed yet); once its data is being removed, a deletion cut short leaves it: the device is then found by operation 6 alone, never linked or opened again, and finished by operation 6 or a link of its name. */
  removing?: true
  /** Its deletion drops the appkey too (`apagarAppkey`): as the deletion that was cut short asked. */
  removingAppkey?: true
}

/** What a device lookup field may match. */
export type DeviceMatch = 'id' | 'name' | 'appkey'

/** A name or appkey index entry: its device, or (an appkey) a deleted device's (`retired`: the appkey stays the account's). */
type IndexEntry = { deviceId: string; retired?: boolean }

/** The characters the pairing code is drawn from: digits the network accepts (no 0). */
const PAIRING_ALPHABET = '123456789'

/** Devices of accounts: creation, lookups, linking, status, deletion; every lookup is scoped to the caller's account. */
export type Devices = ReturnType<typeof createDevices>

/** The devices of a store, linked through `transport` (`cacheTtlMs`, `epoch`: as for the accounts). */
export function createDevices(
  storage: Storage,
  lock: KeyedLock,
  transport: Transport,
  events: GatewayEvents,
  logger: Logger,
  cacheTtlMs = 0,
  epoch?: CacheEpoch,
) {
  const cache = { cache: { ttlMs: cacheTtlMs, maxEntries: 10_000, epoch } }
  const records = new Collection<Device>(storage, lock, 'device', cache)
  const byName = new UniqueIndex<IndexEntry>(storage, lock, 'device-name', cache)
  const byAppkey = new UniqueIndex<IndexEntry>(storage, lock, 'device-appkey', cache)
  const removalHooks: ((device: Device) => Promise<void>)[] = []

  // A reference as written, then trimmed: names are stored trimmed (one made before that keeps its spaces, found as written).
  const find = async (account: Account, value: string, match: DeviceMatch[] = ['id', 'name', 'appkey']): Promise<Device | undefined> =>
    (await findExact(account, value, match)) ?? (value.trim() === value ? undefined : findExact(account, value.trim(), match))
  const findExact = async (account: Account, value: string, match: DeviceMatch[]): Promise<Device | undefined> => {
    // Read by id only a value of the id form (randomUUID): any other text of a client (a NUL, which PostgreSQL refuses in a key) names no id.
    const byId = match.includes('id') && isDeviceId(value) ? await records.get(value) : undefined
    if (ofAccount(byId, account)) return byId
    const valueHash = match.includes('appkey') || match.includes('name') ? hashKey(value) : ''
    if (match.includes('appkey')) {
      const entry = await byAppkey.get(indexId(account.id, valueHash))
      if (entry && !entry.retired) {
        const device = await records.get(entry.deviceId)
        if (ofAccount(device, account, { appkeyHash: valueHash })) return device
      }
    }
    if (match.includes('name')) {
      const entry = await byName.get(indexId(account.id, valueHash))
      const device = entry && (await records.get(entry.deviceId))
      if (ofAccount(device, account, { name: value })) return device
    }
    return undefined
  }
  const cached = (account: Account, value: string, match: DeviceMatch[]): Device | undefined => {
    if (match[0] !== 'appkey' || match.includes('id')) return undefined // find tries an id first
    const valueHash = hashKey(value)
    const entry = byAppkey.peek(indexId(account.id, valueHash))
    const device = entry && !entry.retired ? records.peek(entry.deviceId) : undefined
    return ofAccount(device, account, { appkeyHash: valueHash }) ? device : undefined
  }
  const write = (id: string, change: (device: Device) => Device | void): Promise<Device | undefined> =>
    records.update(id, current => {
      if (!current) return undefined
      const copy = structuredClone(current)
      return change(copy) ?? copy
    })
  const update = async (id: string, change: (device: Device) => Device | void): Promise<Device | undefined> => {
    const updated = await write(id, change)
    await epoch?.bump()
    return updated
  }
  // Claim a name or appkey for a new device: a free one, one kept (retired) from a deleted device, or one whose device is gone (a deletion cut half-way: records go first).
  const claim = async (index: UniqueIndex<IndexEntry>, id: string, owner: { deviceId: string }): Promise<boolean> => {
    for (let attempt = 0; attempt < 3; attempt++) {
      if (await index.claim(id, owner)) return true
      const holder = await index.load(id)
      if (holder && !holder.retired && (await records.load(holder.deviceId))) return false
      if (holder && (await index.replace(id, holder, owner))) return true
    }
    return false
  }
  // The device another process created under `name` while this one tried (its records may still be landing).
  const findAfterRace = async (account: Account, name: string): Promise<Device> => {
    for (let attempt = 0; attempt < 20; attempt++) {
      const device = await find(account, name, ['name', 'appkey'])
      if (device) return device
      await new Promise(resolve => setTimeout(resolve, 25))
    }
    throw new GatewayError('link-failed', { cause: new Error('the device name was taken but its device is not there') })
  }
  const unmarked = (d: Device) => void (delete d.removing, delete d.removingAppkey)
  // A deletion and a link of one device run one after the other (in the process holding it): a link never starts a deleted device's session again.
  const linkLock = (device: Device) => `link:${device.id}`
  const remove = (device: Device, options: { deleteAppkey: boolean }): Promise<void> =>
    lock.run(linkLock(device), async () => {
      try {
        const marked = (d: Device) => void ((d.removing = true), options.deleteAppkey && (d.removingAppkey = true))
        const current = await update(device.id, marked) // the hooks see every agent and link added before
        if (!current) throw new GatewayError('device-not-found') // deleted meanwhile: by a deletion that ran first, nothing left to do
        await transport.logout(device.id).catch(async (err: unknown) => {
          // Nothing removed yet, the phone still linked: the device is kept whole (a failure to unmark it leaves it being deleted, finished by the next deletion or link of its name).
          await update(device.id, unmarked).catch(() => undefined)
          throw err
        })
        for (const hook of removalHooks) await hook(current)
        await records.remove(device.id)
        const mine = { deviceId: device.id }
        await byName.removeIfEqual(indexId(device.accountId, hashKey(device.name)), mine)
        const appkeyId = indexId(device.accountId, device.appkeyHash)
        if (options.deleteAppkey) await byAppkey.removeIfEqual(appkeyId, mine)
        else await byAppkey.replace(appkeyId, mine, { deviceId: device.id, retired: true })
        await epoch?.bump()
        logger.info({ deviceId: device.id }, 'device deleted')
      } catch (cause) {
        throw isGatewayError(cause, 'device-not-found') ? cause : new GatewayError('delete-failed', { cause })
      }
    })

  return {
    /** Register work to run when a device is deleted (agents, schedules, outbox of the device). */
    onRemove: (hook: (device: Device) => Promise<void>): void => void removalHooks.push(hook),
    /** A device of `account` whose id, name or appkey (as allowed by `match`) is `value` (from the record cache when it holds them). */
    find,
    /** The device of `account` whose appkey is `value`, when `match` tries the appkey first, from this process's cached records alone (a send's path); undefined: ask `require`. */
    cached,
    /** Like find, but a missing device is `device-not-found`. */
    async require(account: Account, value: string, match?: DeviceMatch[]): Promise<Device> {
      const device = await find(account, value, match)
      if (!device) throw new GatewayError('device-not-found')
      return device
    },
    /** A device by id, unscoped (ids come from records of the same account). */
    get: (id: string): Promise<Device | undefined> => records.get(id),
    /** The device if this process has it cached, without a store read (undefined: not cached, or none). */
    peek: (id: string): Device | undefined => records.peek(id),
    /** Change a device record under its lock; undefined when it no longer exists. */
    update,
    /** Add `id` (when given) to the device's agents or share tokens and keep the last `max`: resolves the ids dropped, `id` itself (never added) when the device is gone or being deleted. */
    async keepLast(deviceId: string, list: 'agentIds' | 'shareTokens', max: number, id?: string): Promise<string[]> {
      let dropped: string[] = []
      const kept = await update(deviceId, d => {
        if (d.removing) return
        d[list] = d[list].concat(id ?? [])
        dropped = d[list].splice(0, Math.max(0, d[list].length - max))
      })
      return kept && !kept.removing ? dropped : id === undefined ? [] : [id]
    },
    /** A device by id as stored now (never from the cache): for a check after a write of its data. */
    load: (id: string): Promise<Device | undefined> => records.load(id),
    /** The device named `name` in the account, created when absent (a random appkey unless given); `created` tells which. */
    async ensure(
      account: Account,
      wanted: { name: string; appkey?: string; webhookUrl?: string },
    ): Promise<{ device: Device; created: boolean; appkey?: string }> {
      const input = { ...wanted, name: wanted.name.trim(), appkey: wanted.appkey?.trim() } // trimmed like every other name
      let existing = await find(account, input.name, ['name', 'appkey'])
      // A deletion cut short (the store or the network failed half-way): finished now, and the name made anew.
      if (existing?.removing) {
        await remove(existing, { deleteAppkey: existing.removingAppkey === true }).catch(cause => {
          throw new GatewayError('link-failed', { cause: new Error('a deletion of the device cut short could not be finished', { cause }) })
        })
        existing = undefined
      }
      if (existing) return { device: existing, created: false, appkey: existing.appkeyIsName ? existing.name : input.appkey }
      // The id of another device of the account would shadow the name wherever a reference is tried as an id first (operations 5 to 7).
      if (isDeviceId(input.name) && (await find(account, input.name, ['id']))) throw new GatewayError('invalid-input')
      const appkey = input.appkey ?? randomKey(18)
      const device: Device = {
        id: randomUUID(),
        accountId: account.id,
        name: input.name,
        appkeyHash: hashKey(appkey),
        appkeyIsName: appkey === input.name,
        webhookUrl: input.webhookUrl,
        webhookSecret: `whsec_${randomBytes(24).toString('base64')}`,
        webhookEvents: { chat: true, group: true },
        connected: false,
        state: 'closed',
        linked: false,
        shareTokens: [],
        agentIds: [],
        createdAt: Date.now(),
      }
      // The record first (unreachable until indexed), then the name and the appkey, each claimed atomically: the losers of a race take back what they wrote.
      await records.put(device.id, device)
      const nameId = indexId(account.id, hashKey(device.name))
      const appkeyId = indexId(account.id, hashKey(appkey))
      const mine = { deviceId: device.id }
      if (await claim(byName, nameId, mine)) {
        if (await claim(byAppkey, appkeyId, mine)) {
          logger.info({ deviceId: device.id, accountId: account.id }, 'device created')
          return { device, created: true, appkey }
        }
        await byName.removeIfEqual(nameId, mine)
      }
      await records.remove(device.id)
      const winner = await findAfterRace(account, input.name)
      return { device: winner, created: false, appkey: winner.appkeyIsName ? winner.name : input.appkey }
    },
    /** A generated device name, unique enough to never collide in practice. */
    generatedName: (): string => `dispositivo-${randomBytes(5).toString('hex')}`,
    /** Start linking a device that is not connected (a QR string, or with `phone` an 8-digit pairing code), then store `webhookUrl`. */
    link: (device: Device, phone?: string, webhookUrl?: string): Promise<LinkChallenge> =>
      lock.run(linkLock(device), async () => {
        const stored = await records.load(device.id)
        if (!stored || stored.removing) throw new GatewayError('link-failed', { cause: new Error('the device was deleted meanwhile') })
        if ((await transport.status(device.id)).connected) throw new GatewayError('already-connected')
        const challenge = await transport.link(device.id, phone ? { phone, code: randomDigits(8, PAIRING_ALPHABET) } : {})
        // Compared with the record now, not as the request read it: a receiver's 410 (or another request) may have changed it since.
        let changed = false
        const set = (d?: Device) =>
          (changed = !!d && webhookUrl !== undefined && d.webhookUrl !== webhookUrl) ? { ...structuredClone(d!), webhookUrl } : undefined
        if (webhookUrl !== undefined) await records.update(device.id, set)
        if (changed) await epoch?.bump()
        return challenge
      }),
    /** The device's live session status (from the transport; at once, without a promise, when it knows it in memory). */
    status: (device: Device): SessionStatus | Promise<SessionStatus> => transport.statusNow?.(device.id) ?? transport.status(device.id),
    /** Delete a device this request has just created and could not link (a refused request leaves nothing); a failure is logged. */
    discard: (device: Device): Promise<void> =>
      remove(device, { deleteAppkey: true }).catch(err => logger.error({ err, deviceId: device.id }, 'device of a failed link not deleted')),
    /** Delete a device (logout, removal hooks, records); without `deleteAppkey` the appkey stays the account's. A failure is `delete-failed`. */
    remove,
    /** Keep the stored device in step with a transport status event; emits `device-status`. */
    async applyStatus(deviceId: string, status: SessionStatus): Promise<void> {
      const device = await write(deviceId, d => {
        d.connected = status.connected
        d.state = status.state
        if (status.phone) d.phone = status.phone
        if (status.state === 'open') d.linked = true
        // A new link began (operation 3 or 4 on a device replaced, refused or logged out): what it was linked with is gone, until this link opens.
        if (status.state === 'logged-out' || status.state === 'linking') d.linked = false
      })
      if (device) events.emit('device-status', { deviceId, accountId: device.accountId, status })
    },
    /** Every device of every account (a scan: for metrics and tools, never for API requests). */
    async *all(): AsyncIterable<Device> {
      for await (const [, device] of records.all()) yield device
    },
  }
}

/** Whether `device` is one of `account`'s, and (when given) has that appkey hash (compared in constant time) or name. */
function ofAccount(device: Device | undefined, account: Account, match?: { appkeyHash: string } | { name: string }): device is Device {
  if (device === undefined || device.accountId !== account.id) return false
  return !match || ('name' in match ? device.name === match.name : safeEqual(device.appkeyHash, match.appkeyHash))
}

/** Whether `value` has the form of a device id (a randomUUID). */
function isDeviceId(value: string): boolean {
  return /^[\da-f]{8}(-[\da-f]{4}){3}-[\da-f]{12}$/.test(value)
}

/** The id of a name or appkey index entry: the account and the value's hash. */
function indexId(accountId: string, valueHash: string): string {
  return `${accountId}:${valueHash}`
}
