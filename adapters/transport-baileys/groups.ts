import type { GroupMetadata } from '@whiskeysockets/baileys'
import { TransportError } from 'zapgate'
import type { GroupInfo, GroupJoinRequest, GroupRef } from 'zapgate'
import type { AddressResolver } from './addresses.ts'
import { socketCall } from './errors.ts'
import { isGroupJid, normalizeJid, parseAddress, parseInviteCode, phoneOf } from './jid.ts'
import type { DeviceSession } from './session/session.ts'
import type { SocketLike } from './types.ts'

/** What group calls need. */
export interface GroupDeps {
  session: DeviceSession
  socket: SocketLike
  resolver: AddressResolver
  timeoutMs: number
}

/**
 * Group metadata by id (the device must be a member) or by invite code or link (a preview, without
 * joining). Undefined when WhatsApp knows no such group for this device or the invite is invalid.
 */
export async function groupInfo(deps: GroupDeps, ref: GroupRef): Promise<GroupInfo | undefined> {
  if (!ref || typeof ref !== 'object') throw new TransportError('invalid', 'a group is named by id or invite')
  if ('invite' in ref) {
    const code = parseInviteCode(ref.invite)
    if (!code) return undefined
    const metadata = await missingAsUndefined(socketCall('group invite info', deps.timeoutMs, () => deps.socket.groupGetInviteInfo(code)))
    return metadata && toGroupInfo(metadata, code)
  }
  const address = typeof ref.id === 'string' ? parseAddress(ref.id) : undefined
  if (address?.kind !== 'jid' || !isGroupJid(address.jid)) return undefined
  // Cached unless a group event came while it was on its way (the answer may predate it).
  const metadata = await deps.session.memory.groups.fresh(address.jid, () =>
    missingAsUndefined(socketCall('group metadata', deps.timeoutMs, () => deps.socket.groupMetadata(address.jid))),
  )
  if (!metadata) return undefined
  const inviteCode = isAdmin(metadata, deps.session) ? await inviteCodeOf(deps, metadata.id) : undefined
  return toGroupInfo(metadata, inviteCode)
}

/** Create a group with the device as admin; participants are phone numbers (or user JIDs), each asked for once, the device itself never. */
export async function groupCreate(deps: GroupDeps, subject: string, participants: string[]): Promise<GroupInfo> {
  if (typeof subject !== 'string' || subject.trim() === '') throw new TransportError('invalid', 'a group needs a subject')
  if (!Array.isArray(participants)) throw new TransportError('invalid', 'participants must be a list of phone numbers')
  const jids = new Set<string>() // once each (two spellings of a number, with and without the ninth digit, are one JID), never the device itself
  await deps.resolver.prime(deps.socket, participants, deps.timeoutMs) // a few queries for all, not one round trip each
  for (const participant of participants) jids.add(await deps.resolver.resolveUser(deps.socket, participant, deps.timeoutMs))
  for (const jid of jids) if (isSelf(jid, deps.session)) jids.delete(jid)
  // Not cached: WhatsApp's answer also lists the participants it could not add (privacy: invited instead), with an error code Baileys drops.
  const metadata = await socketCall('group create', deps.timeoutMs, () => deps.socket.groupCreate(subject, [...jids]))
  return toGroupInfo(metadata, await inviteCodeOf(deps, metadata.id))
}

/**
 * Join by invite code or link; the group id, a request awaiting approval, or undefined when the invite
 * is invalid or expired. A group that requires admin approval answers the join with
 * `<membership_approval_request jid>` instead of `<group jid>` (whatsmeow's JoinGroupWithLink reads both);
 * Baileys' groupAcceptInvite reads only `<group>` and resolves undefined without an error, so the group's
 * id comes from the invite's preview.
 */
export async function groupJoin(deps: GroupDeps, invite: string): Promise<string | GroupJoinRequest | undefined> {
  const code = parseInviteCode(invite)
  if (!code) return undefined
  // null: WhatsApp answered without `<group>` (a request); undefined: a refused invite
  const jid = await missingAsUndefined(socketCall('group join', deps.timeoutMs, () => deps.socket.groupAcceptInvite(code)).then(joined => joined ?? null))
  if (jid !== null) return jid ? normalizeJid(jid) : undefined
  const group = await missingAsUndefined(socketCall('group invite info', deps.timeoutMs, () => deps.socket.groupGetInviteInfo(code)))
  return group && { id: normalizeJid(group.id), awaitingApproval: true }
}

/** GroupMetadata as the gateway reports it: LID participants carry their phone number when WhatsApp gave it. */
function toGroupInfo(metadata: GroupMetadata, inviteCode?: string): GroupInfo {
  const info: GroupInfo = {
    id: metadata.id,
    subject: metadata.subject ?? '',
    participants: (metadata.participants ?? []).map(p => {
      const phone = phoneOf(p.phoneNumber) ?? phoneOf(p.id)
      const admin = p.admin === 'admin' || p.admin === 'superadmin' || Boolean(p.isAdmin || p.isSuperAdmin)
      return { id: p.id, ...(phone ? { phone } : {}), admin }
    }),
  }
  if (metadata.desc) info.description = metadata.desc
  if (inviteCode) info.inviteCode = inviteCode
  return info
}

/** Whether the device's own account is an admin of the group `metadata` describes. */
export function isAdmin(metadata: GroupMetadata, session: DeviceSession): boolean {
  const me = metadata.participants?.find(p => isSelf(p.phoneNumber ?? p.id, session) || isSelf(p.id, session))
  return Boolean(me && (me.admin === 'admin' || me.admin === 'superadmin'))
}

// --- Internal helpers ---

/** Not found, not a member, gone or refused invites read as "no such group". */
async function missingAsUndefined<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call
  } catch (error) {
    if (error instanceof TransportError && (error.code === 'not-found' || error.code === 'not-admin' || error.code === 'invalid')) return undefined
    throw error
  }
}

/** Whether `jid` (PN or LID) names the device's own account. */
function isSelf(jid: string, session: DeviceSession): boolean {
  const self = session.self()
  return Boolean((self.phone && phoneOf(jid) === self.phone) || (self.lid && normalizeJid(jid) === self.lid))
}

async function inviteCodeOf(deps: GroupDeps, jid: string): Promise<string | undefined> {
  return socketCall('group invite code', deps.timeoutMs, () => deps.socket.groupInviteCode(jid)).catch(() => undefined)
}
