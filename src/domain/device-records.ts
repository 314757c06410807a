import { randomBytes, randomUUID } from 'node:crypto'
import { hashKey, safeEqual } from '../security/keys.ts'
import type { SessionState } from '../ports/transport.ts'
import type { Account } from './accounts.ts'

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
  /** Linked once and not logged out since: resumed when the gateway starts. */
  linked: boolean
  /** Hashes of the QR share link tokens. */
  shareTokens: string[]
  /** Agents hosted by the device, oldest first; the last one answers. */
  agentIds: string[]
  createdAt: number
}

/** An appkey's index entry: its device, or a deleted device's (`retired`: the appkey stays the account's). */
export type AppkeyEntry = { deviceId: string; retired?: boolean }

/** What a device lookup field may match. */
export type DeviceMatch = 'id' | 'name' | 'appkey'

/** Work to do when a device is deleted (agents, schedules, outbox of the device). */
export type DeviceRemovalHook = (device: Device) => Promise<void>

/** A new device record of `account` (not linked, webhook events on). */
export function newDevice(account: Account, name: string, appkey: string, webhookUrl: string | undefined): Device {
  return {
    id: randomUUID(),
    accountId: account.id,
    name,
    appkeyHash: hashKey(appkey),
    appkeyIsName: appkey === name,
    webhookUrl,
    webhookSecret: `whsec_${randomBytes(24).toString('base64')}`,
    webhookEvents: { chat: true, group: true },
    connected: false,
    state: 'closed',
    linked: false,
    shareTokens: [],
    agentIds: [],
    createdAt: Date.now(),
  }
}

/** Whether `device` is a device of `account` (the lookup by id). */
export function byId(device: Device | undefined, account: Account): device is Device {
  return device !== undefined && device.accountId === account.id
}

/** Whether `device` is the device of `account` whose appkey hashes to `valueHash` (constant-time compare). */
export function byAppkey(device: Device | undefined, account: Account, valueHash: string): device is Device {
  return device !== undefined && device.accountId === account.id && safeEqual(device.appkeyHash, valueHash)
}

/** Whether `device` is the device of `account` named `name`. */
export function byName(device: Device | undefined, account: Account, name: string): device is Device {
  return device !== undefined && device.accountId === account.id && device.name === name
}

/** The id of a name or appkey index entry: the account and the value's hash. */
export function indexId(accountId: string, valueHash: string): string {
  return `${accountId}:${valueHash}`
}

export function nameIndexId(accountId: string, name: string): string {
  return indexId(accountId, hashKey(name))
}

export function appkeyIndexId(accountId: string, appkey: string): string {
  return indexId(accountId, hashKey(appkey))
}
