import { TransportError } from 'zapgate'
import type { GroupInfo } from 'zapgate'
import { putBounded } from 'zapgate/adapter-kit'
import { INVITE_BASE, groupId, inviteCode, parseAddress, parseInvite, userId } from './addresses.ts'

/** The most members a group can have, as on the real network. */
const MAX_MEMBERS = 1024
/** The longest group subject, in characters (code points). */
const MAX_SUBJECT = 100

/** A group of the simulated network. */
export interface Group {
  id: string
  subject: string
  description?: string
  /** Phone that created it. */
  creator: string
  /** Member phones, in joining order, each with its admin flag. */
  members: Map<string, boolean>
  inviteCode: string
  createdAt: number
}

/** The groups of a network, with their invite codes; the oldest are dropped past `limit`. */
export class GroupRegistry {
  private readonly groups = new Map<string, Group>()
  private readonly invites = new Map<string, string>()

  constructor(private readonly limit: number) {}

  /** Create a group whose creator is its admin; `phones` (already parsed) join as members. */
  create(creator: string, subject: string, phones: string[], description?: string): Group {
    // Characters as code points (an emoji is one, though two UTF-16 units), as the gateway counts the name it takes (docs/decisions.md).
    if (typeof subject !== 'string' || subject.trim() === '' || subject.length > 2 * MAX_SUBJECT || [...subject].length > MAX_SUBJECT) {
      throw new TransportError('invalid', `group subject must have 1 to ${MAX_SUBJECT} characters`)
    }
    const members = new Map<string, boolean>([[creator, true]])
    for (const phone of phones) if (!members.has(phone)) members.set(phone, false)
    if (members.size > MAX_MEMBERS) throw new TransportError('invalid', `a group has at most ${MAX_MEMBERS} members`)
    const group: Group = { id: groupId(), subject, creator, members, inviteCode: inviteCode(), createdAt: Date.now() }
    if (description) group.description = description
    putBounded(this.groups, group.id, group, this.limit, (_, old) => this.invites.delete(old.inviteCode))
    this.invites.set(group.inviteCode, group.id)
    return group
  }

  /** A group by id (any address form of it), or undefined. */
  get(id: string): Group | undefined {
    const address = parseAddress(id)
    return address?.kind === 'group' ? this.groups.get(address.id) : undefined
  }

  /** A group by invite code or invite link (query string ignored), or undefined. */
  byInvite(invite: string): Group | undefined {
    const code = parseInvite(invite)
    const id = code === undefined ? undefined : this.invites.get(code)
    return id === undefined ? undefined : this.groups.get(id)
  }

  /** Add `phone` to the group of `invite` as a member; the group, or undefined for an invalid invite. */
  join(phone: string, invite: string): Group | undefined {
    const group = this.byInvite(invite)
    if (!group || group.members.has(phone)) return group
    if (group.members.size >= MAX_MEMBERS) throw new TransportError('failed', 'the group is full')
    group.members.set(phone, false)
    return group
  }

  /** Replace the group's invite code (the old link stops working); the new code. */
  revokeInvite(group: Group): string {
    this.invites.delete(group.inviteCode)
    group.inviteCode = inviteCode()
    this.invites.set(group.inviteCode, group.id)
    return group.inviteCode
  }

  /** The invite link of a group. */
  link(group: Group): string {
    return INVITE_BASE + group.inviteCode
  }

  /**
   * The port's view of a group. `hiddenLid` gives the LID of members who hide their number;
   * `withInvite` includes the invite code (admins and invite holders see it).
   */
  info(group: Group, withInvite: boolean, hiddenLid: (phone: string) => string | undefined): GroupInfo {
    const participants = [...group.members].map(([phone, admin]) => {
      const lid = hiddenLid(phone)
      return lid ? { id: lid, admin } : { id: userId(phone), phone, admin }
    })
    const info: GroupInfo = { id: group.id, subject: group.subject, participants }
    if (group.description) info.description = group.description
    if (withInvite) info.inviteCode = group.inviteCode
    return info
  }

  /** Number of groups kept. */
  get size(): number {
    return this.groups.size
  }
}
