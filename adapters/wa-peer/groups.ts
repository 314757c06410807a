import { randomBytes, randomInt } from 'node:crypto'
import type { BinaryNode, proto } from '@whiskeysockets/baileys'
import { bytes, child, children, iqResult } from './baileys.ts'
import { deliver, messageId, splitJid } from './messaging.ts'
import type { Account, Channel, GroupMember, LinkedDevice, PeerCore, PeerGroup, PhoneSent } from './model.ts'
import type { PhoneMessage } from './phone.ts'

/**
 * Groups in phone-number addressing, as WhatsApp's server keeps them: the `w:g2` iqs (metadata,
 * create, invite code, invite preview, join by invite, add/remove/promote/demote, leave, subject,
 * participating), `w:gp2` participant notifications to the members' devices, and group messages with
 * sender keys both ways. A device's group message carries its sender key distribution message in a
 * pairwise `<enc>` per member device and one `skmsg` for all: each member phone takes in the sender
 * key, then decrypts the skmsg and records it; other accounts' companions get it forwarded. A phone's
 * group message is encrypted once under its own sender key; each companion of the other members gets
 * the skmsg, with the distribution message (pairwise) the first time.
 */

/** Answer a `w:g2` iq from `device`; undefined for one the peer does not know (answered 501 by iq.ts). */
export function groupIq(core: PeerCore, device: LinkedDevice, iq: BinaryNode): BinaryNode | undefined {
  const first = children(iq)[0]
  const { type, to = '' } = iq.attrs
  const me = device.account
  if (to === '@g.us' || to === 'g.us') {
    if (type === 'set' && first?.tag === 'create') {
      const invited = children(first)
        .filter(c => c.tag === 'participant' && c.attrs.jid)
        .map(c => core.accountByUser(splitJid(c.attrs.jid).user))
        .filter((account): account is Account => !!account)
      return iqResult(iq, [metadataNode(createGroup(core, device, first.attrs.subject ?? '', invited))])
    }
    if (first?.tag === 'invite' && first.attrs.code) {
      const group = [...core.groups.values()].find(g => g.inviteCode === first.attrs.code)
      if (!group) return groupError(iq, '406', 'not-acceptable')
      if (type === 'get') return iqResult(iq, [metadataNode(group)])
      const request = group.joinRequests && !group.members.has(me.pn) // approval required: WhatsApp answers a request to the admins, not a join
      if (request) group.joinRequests!.add(me.pn)
      else if (!group.members.has(me.pn)) changeMembers(core, group, device, 'add', [me])
      return iqResult(iq, [{ tag: request ? 'membership_approval_request' : 'group', attrs: { jid: group.jid } }])
    }
    if (type === 'get' && first?.tag === 'participating') {
      const mine = [...core.groups.values()].filter(g => g.members.has(me.pn))
      return iqResult(iq, [{ tag: 'groups', attrs: {}, content: mine.map(metadataNode) }])
    }
    if (type === 'set' && first?.tag === 'leave') {
      for (const { attrs } of children(first)) {
        const group = core.groups.get(attrs.id?.includes('@') ? attrs.id : `${attrs.id}@g.us`)
        if (group?.members.has(me.pn)) changeMembers(core, group, device, 'remove', [me])
      }
      return iqResult(iq)
    }
    return undefined
  }
  const group = core.groups.get(to)
  if (!group) return groupError(iq, '404', 'item-not-found')
  const member = group.members.get(me.pn)
  if (!member) return groupError(iq, '401', 'not-authorized')
  if (type === 'get' && first?.tag === 'query') return iqResult(iq, [metadataNode(group)])
  if (first?.tag === 'invite') {
    if (!member.admin) return groupError(iq, '401', 'not-authorized')
    if (type === 'set') group.inviteCode = inviteCode()
    return iqResult(iq, [{ tag: 'invite', attrs: { code: group.inviteCode } }])
  }
  if (type === 'set' && first && ['add', 'remove', 'promote', 'demote'].includes(first.tag)) {
    if (!member.admin) return groupError(iq, '401', 'not-authorized')
    const results: BinaryNode[] = []
    const changed: Account[] = []
    for (const { attrs } of children(first).filter(c => c.tag === 'participant')) {
      const account = attrs.jid ? core.accountByUser(splitJid(attrs.jid).user) : undefined
      const isMember = !!account && group.members.has(account.pn)
      const error = !account ? '404' : first.tag === 'add' ? (isMember ? '409' : undefined) : isMember ? undefined : '404'
      results.push({ tag: 'participant', attrs: { jid: attrs.jid ?? '', ...(error ? { error } : {}) } })
      if (!error && account) changed.push(account)
    }
    if (changed.length) changeMembers(core, group, device, first.tag as MemberChange, changed)
    return iqResult(iq, [{ tag: first.tag, attrs: {}, content: results }])
  }
  if (type === 'set' && first?.tag === 'subject') {
    group.subject = bytes(first)?.toString('utf8') ?? group.subject
    return iqResult(iq)
  }
  return undefined
}

/** Handle a `<message>` a device sent to a group: acked, sender keys taken in, decrypted by each member phone, forwarded to the members' companions. */
export async function groupMessageFromDevice(core: PeerCore, channel: Channel, node: BinaryNode): Promise<void> {
  const sender = channel.device
  const { id, to } = node.attrs
  if (!sender || !id || !to) return void core.records.problems.push(`a group message without sender, id or group: ${JSON.stringify(node.attrs)}`)
  if (core.failMessages) return channel.send({ tag: 'ack', attrs: { class: 'message', id, from: to, t: core.now(), error: String(core.failMessages) } })
  const group = core.groups.get(to)
  if (!group || !group.members.has(sender.account.pn)) {
    core.records.problems.push(`a group message ${id} to ${to}, which ${group ? 'the sender is no member of' : 'is no group of this peer'}`)
    return channel.send({ tag: 'ack', attrs: { class: 'message', id, from: to, t: core.now(), error: group ? '403' : '404' } })
  }
  channel.send({ tag: 'ack', attrs: { class: 'message', id, from: to, t: core.now() } })
  const pairwise = new Map<LinkedDevice, BinaryNode>()
  for (const target of children(child(node, 'participants')).filter(c => c.tag === 'to')) {
    const enc = child(target, 'enc')
    const ciphertext = bytes(enc)
    if (!enc || !ciphertext || !target.attrs.jid) continue
    const { user, device } = splitJid(target.attrs.jid)
    const account = core.accountByUser(user)
    if (!account) continue
    if (device !== 0) {
      const companion = account.devices.get(device)
      if (companion && companion.account !== sender.account) pairwise.set(companion, enc)
      continue
    }
    try {
      const message = await account.signal.decrypt(sender.lid, enc.attrs.type as 'pkmsg' | 'msg', ciphertext)
      const inner = message.deviceSentMessage?.message ?? message
      if (inner.senderKeyDistributionMessage) await account.signal.processSenderKey(inner.senderKeyDistributionMessage, sender.jid)
      else core.records.problems.push(`${account.pn} got a pairwise message in group ${to} without a sender key (${id})`)
    } catch (err) {
      core.records.problems.push(`${account.pn} could not take in the sender key of ${sender.jid} for ${to}: ${(err as Error).message}`)
    }
  }
  const skmsg = children(node).find(c => c.tag === 'enc' && c.attrs.type === 'skmsg')
  const groupCiphertext = bytes(skmsg)
  if (!skmsg || !groupCiphertext) return void core.records.problems.push(`group message ${id} to ${to} has no skmsg`)
  for (const { account } of group.members.values()) {
    try {
      const message = await account.signal.decryptGroup(group.jid, sender.jid, groupCiphertext)
      const read: PhoneMessage = {
        id,
        from: sender.account.pn,
        fromDevice: sender.jid,
        to: group.jid,
        message,
        encryption: 'skmsg',
        sentByOwnDevice: account === sender.account,
        at: Date.now(),
      }
      account.inbox.push(read)
      core.stats.decrypted++
    } catch (err) {
      core.records.problems.push(`${account.pn} could not decrypt group message ${id} of ${sender.jid} in ${to}: ${(err as Error).message}`)
    }
    if (account === sender.account) continue
    for (const companion of account.devices.values()) {
      const own = pairwise.get(companion)
      deliver(core, companion, {
        id,
        build: async () => ({
          tag: 'message',
          attrs: {
            id,
            from: group.jid,
            participant: sender.jid,
            participant_lid: sender.lid,
            t: core.now(),
            type: node.attrs.type ?? 'text',
            notify: sender.account.pushName,
          },
          content: own ? [own, skmsg] : [skmsg],
        }),
      })
    }
  }
}

/** The phone of `from` sends `message` to `group`: one skmsg under its sender key for every other member's companions (with the key, pairwise, the first time). */
export function phoneSendsToGroup(core: PeerCore, from: Account, group: PeerGroup, message: proto.IMessage, id = messageId()): PhoneSent {
  if (!group.members.has(from.pn)) throw new Error(`${from.pn} is no member of ${group.jid}`)
  const sent = { id, to: group.jid, message }
  from.sent.push(sent)
  if ([...group.members.values()].some(({ account }) => account !== from && account.devices.size > 0)) core.stats.phoneMessages++
  const encrypted = from.signal.encryptGroup(group.jid, from.jid, message)
  encrypted.catch(() => {}) // reported by each delivery
  for (const { account } of group.members.values()) {
    if (account === from) continue
    for (const target of account.devices.values()) {
      deliver(core, target, {
        id,
        async build(device) {
          const { ciphertext, senderKeyDistribution } = await encrypted
          const content: BinaryNode[] = []
          const key = `${from.pn} ${device.jid}`
          if (!group.senderKeysSent.has(key)) {
            const distribution = { senderKeyDistributionMessage: { groupId: group.jid, axolotlSenderKeyDistributionMessage: senderKeyDistribution } }
            const pair = await from.signal.encrypt(device.lid, distribution, () => core.deviceBundle(device))
            content.push({ tag: 'enc', attrs: { v: '2', type: pair.type }, content: Buffer.from(pair.ciphertext) })
            group.senderKeysSent.add(key)
          }
          content.push({ tag: 'enc', attrs: { v: '2', type: 'skmsg' }, content: Buffer.from(ciphertext) })
          return {
            tag: 'message',
            attrs: {
              id,
              from: group.jid,
              participant: from.jid,
              participant_lid: from.lidJid,
              t: core.now(),
              type: message.reactionMessage ? 'reaction' : 'text',
              notify: from.pushName,
            },
            content,
          }
        },
      })
    }
  }
  return sent
}

/** Members join or leave (or change role) by the act of `actor` (an admin's device, or a phone when undefined): the group changes, every member device gets a `w:gp2` notification. */
export function changeMembers(core: PeerCore, group: PeerGroup, actor: LinkedDevice | Account | undefined, change: MemberChange, accounts: Account[]): void {
  const notified = new Set(group.members.values())
  for (const account of accounts) {
    if (change === 'add') group.members.set(account.pn, { account })
    else if (change === 'remove') group.members.delete(account.pn)
    else {
      const member = group.members.get(account.pn)
      if (member) member.admin = change === 'promote' ? 'admin' : undefined
    }
    for (const key of [...group.senderKeysSent]) if (change === 'remove' && key.startsWith(`${account.pn} `)) group.senderKeysSent.delete(key)
  }
  for (const member of group.members.values()) notified.add(member)
  const actorJid = actor ? ('account' in actor ? actor.account.jid : actor.jid) : group.creator.jid
  for (const { account } of notified) {
    for (const device of account.devices.values()) {
      deliver(core, device, {
        id: `gp2-${group.jid}`,
        build: async () => ({
          tag: 'notification',
          attrs: { from: group.jid, type: 'w:gp2', id: messageId(), participant: actorJid, t: core.now() },
          content: [{ tag: change, attrs: {}, content: accounts.map(participantNode) }],
        }),
      })
    }
  }
}

/** The kinds of membership change. */
type MemberChange = 'add' | 'remove' | 'promote' | 'demote'

/** A new group of `actor`'s account (its admin) with `invited` as members; every member device gets the add notification. */
export function createGroup(core: PeerCore, actor: LinkedDevice | Account, subject: string, invited: Account[]): PeerGroup {
  const creator = 'account' in actor ? actor.account : actor
  const group: PeerGroup = {
    jid: `120363${randomInt(100_000, 999_999)}${randomInt(100_000, 999_999)}@g.us`,
    subject,
    creator,
    creation: Math.floor(Date.now() / 1000),
    members: new Map<string, GroupMember>([[creator.pn, { account: creator, admin: 'superadmin' }]]),
    inviteCode: inviteCode(),
    senderKeysSent: new Set(),
  }
  core.groups.set(group.jid, group)
  changeMembers(
    core,
    group,
    actor,
    'add',
    invited.filter(account => account !== creator),
  )
  return group
}

// --- Internal helpers ---

function metadataNode(group: PeerGroup): BinaryNode {
  const participants = [...group.members.values()].map(member => ({
    ...participantNode(member.account),
    attrs: { ...participantNode(member.account).attrs, ...(member.admin ? { type: member.admin } : {}) },
  }))
  const description: BinaryNode[] = group.description
    ? [{ tag: 'description', attrs: { id: 'wa-peer', t: String(group.creation) }, content: [{ tag: 'body', attrs: {}, content: group.description }] }]
    : []
  return {
    tag: 'group',
    attrs: {
      id: group.jid.split('@')[0],
      subject: group.subject,
      s_t: String(group.creation),
      s_o: group.creator.jid,
      creation: String(group.creation),
      creator: group.creator.jid,
      size: String(group.members.size),
    },
    content: [...participants, ...description],
  }
}

function participantNode(account: Account): BinaryNode {
  return { tag: 'participant', attrs: { jid: account.jid, lid: account.lidJid } }
}

function groupError(iq: BinaryNode, code: string, text: string): BinaryNode {
  return { tag: 'iq', attrs: { from: iq.attrs.to ?? 'g.us', type: 'error', id: iq.attrs.id }, content: [{ tag: 'error', attrs: { code, text } }] }
}

/** 22 letters and digits, as WhatsApp's invite codes. */
function inviteCode(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
  return Array.from(randomBytes(22), byte => alphabet[byte % alphabet.length]).join('')
}
