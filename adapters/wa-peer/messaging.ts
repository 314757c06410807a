import { randomBytes } from 'node:crypto'
import type { BinaryNode, proto } from '@whiskeysockets/baileys'
import { bytes, child, children } from './baileys.ts'
import type { Account, Channel, LinkedDevice, Outgoing, PeerCore, PhoneSent } from './model.ts'
import type { PhoneMessage } from './phone.ts'

/**
 * 1:1 messages both ways, with real encryption. A device's `<message>` is acked by the server, then
 * each `<to>` of its participants is decrypted by the phone it names (device 0 of an account), which
 * records the content and answers with a delivery receipt; `<to>` nodes for another account's
 * companion device are forwarded to it. A phone's message is encrypted for each companion device of
 * the recipient account (a session is set up from the device's uploaded pre-keys when there is none)
 * and delivered at once when the device is online, else at its next login as an offline message.
 */

/** Handle a `<message>` a device sent. */
export async function messageFromDevice(core: PeerCore, channel: Channel, node: BinaryNode): Promise<void> {
  const sender = channel.device
  const { id, to } = node.attrs
  if (!sender || !id || !to) return void core.records.problems.push(`a message without sender, id or recipient: ${JSON.stringify(node.attrs)}`)
  if (core.failMessages) return channel.send({ tag: 'ack', attrs: { class: 'message', id, from: to, t: core.now(), error: String(core.failMessages) } })
  channel.send({ tag: 'ack', attrs: { class: 'message', id, from: to, t: core.now() } })
  for (const target of children(child(node, 'participants')).filter(c => c.tag === 'to')) {
    const enc = child(target, 'enc')
    const ciphertext = bytes(enc)
    const { jid } = target.attrs
    if (!enc || !ciphertext || !jid) continue
    const { user, device } = splitJid(jid)
    const account = core.accountByUser(user)
    if (!account) {
      core.records.problems.push(`a message for ${jid}, which is no account of this peer`)
      continue
    }
    if (device === 0) await phoneReads(core, account, sender, { id, to, type: enc.attrs.type, ciphertext })
    else forward(core, account.devices.get(device), sender, node, enc)
  }
}

/** Handle a `<receipt>` a device sent: recorded on the account it is addressed to, then acked. */
export function receiptFromDevice(core: PeerCore, channel: Channel, node: BinaryNode): void {
  const { id, to, type } = node.attrs
  if (!id || !to) return
  channel.send({ tag: 'ack', attrs: { class: 'receipt', id, from: to, ...(type ? { type } : {}) } })
  const account = core.accountByUser(splitJid(to).user)
  const ids = [
    id,
    ...children(child(node, 'list'))
      .map(item => item.attrs.id)
      .filter(Boolean),
  ]
  account?.receipts.push({ id, ids, type: type ?? 'delivery', fromDevice: channel.device?.jid ?? '?', at: Date.now() })
}

/** Handle an `<ack>` a device sent for a message or receipt the peer delivered. */
export function ackFromDevice(core: PeerCore, channel: Channel, node: BinaryNode): void {
  const { id, to, error } = node.attrs
  if (!id || !to) return
  const account = core.accountByUser(splitJid(to).user)
  account?.acks.push({ id, fromDevice: channel.device?.jid ?? '?', ...(error ? { error } : {}) })
}

/** The phone of `from` sends `message` to the account `to` (each of its companion devices gets it). */
export function phoneSends(core: PeerCore, from: Account, to: Account, message: proto.IMessage, id = messageId()): PhoneSent {
  const sent = { id, to: to.pn, message }
  from.sent.push(sent)
  if (to.devices.size > 0) core.stats.phoneMessages++
  for (const device of to.devices.values()) deliver(core, device, phoneMessage(core, from, message, id))
  return sent
}

/** A message of the phone of `from`, encrypted for the device it is delivered to when it is delivered. */
export function phoneMessage(core: PeerCore, from: Account, message: proto.IMessage, id = messageId()): Outgoing {
  return {
    id,
    async build(target) {
      const { type, ciphertext } = await from.signal.encrypt(target.lid, message, () => core.deviceBundle(target))
      return {
        tag: 'message',
        attrs: { id, ...senderAttrs(from), t: core.now(), type: messageType(message), notify: from.pushName },
        content: [{ tag: 'enc', attrs: { v: '2', type }, content: Buffer.from(ciphertext) }],
      }
    },
  }
}

/** The phone of `account` sends a receipt (`read`, or `delivery` for none) for a message it got. */
export function phoneReceipt(core: PeerCore, account: Account, message: PhoneMessage, type: 'read' | 'delivery'): void {
  const sender = core.accountByUser(message.from)
  if (!sender) return
  for (const device of sender.devices.values()) {
    deliver(core, device, {
      id: message.id,
      build: async () => ({
        tag: 'receipt',
        attrs: {
          id: message.id,
          from: account.addressing === 'pn' ? account.jid : account.lidJid,
          t: core.now(),
          ...(type === 'read' ? { type: 'read' } : {}),
        },
      }),
    })
  }
}

/**
 * The phone of `account` could not decrypt `message` and asks its sender's devices to send it again:
 * a retry receipt (`type="retry"` with a `<retry count id t v/>` child) from the phone (device 0), as
 * WhatsApp delivers one. Baileys answers it by sending the message again under the same id. `more`:
 * further messages of the same sender the one receipt names, in a `<list>` of `<item id>` (its first child).
 */
export function phoneRetryReceipt(core: PeerCore, account: Account, message: PhoneMessage, count = 1, more: PhoneMessage[] = []): void {
  const sender = core.accountByUser(message.from)
  if (!sender) return
  const t = core.now()
  const retry: BinaryNode = { tag: 'retry', attrs: { count: String(count), id: message.id, t, v: '1' } }
  const list: BinaryNode[] = more.length ? [{ tag: 'list', attrs: {}, content: more.map(m => ({ tag: 'item', attrs: { id: m.id } })) }] : []
  for (const device of sender.devices.values()) {
    deliver(core, device, {
      id: message.id,
      build: async () => ({
        tag: 'receipt',
        attrs: { id: message.id, from: account.addressing === 'pn' ? account.jid : account.lidJid, t, type: 'retry' },
        content: [...list, retry],
      }),
    })
  }
}

/**
 * Tell every other linked device that `device` was added to or removed from its account (a `devices`
 * notification), as WhatsApp does: Baileys caches device lists, and without it a send would miss
 * a device linked after the list was cached (or keep encrypting for a removed one).
 */
export function announceDevice(core: PeerCore, device: LinkedDevice, change: 'add' | 'remove'): void {
  for (const target of core.allDevices()) {
    if (target === device) continue
    deliver(core, target, {
      id: `devices-${device.jid}`,
      build: async () => ({
        tag: 'notification',
        attrs: { from: device.account.jid, type: 'devices', id: messageId(), t: core.now() },
        content: [
          { tag: change, attrs: { device_hash: '2:wa-peer' }, content: [{ tag: 'device', attrs: { jid: device.jid, 'key-index': String(device.keyIndex) } }] },
        ],
      }),
    })
  }
}

/** Deliver to a device now when it is online, else keep it for its next login. Deliveries to one device keep their order. */
export function deliver(core: PeerCore, device: LinkedDevice, outgoing: Outgoing): void {
  if (!device.online || !device.channel || device.channel.closed) return void device.waiting.push(outgoing)
  const channel = device.channel
  const previous = chains.get(device) ?? Promise.resolve()
  const next = previous.then(async () => {
    try {
      channel.send(await outgoing.build(device))
    } catch (err) {
      core.records.problems.push(`could not deliver ${outgoing.id} to ${device.jid}: ${(err as Error).message}`)
    }
  })
  chains.set(device, next)
}

/** Deliver what waited for a device, as offline messages (`offline` attribute), in order; resolves with their count. */
export async function deliverWaiting(core: PeerCore, device: LinkedDevice, channel: Channel): Promise<number> {
  const waiting = device.waiting.splice(0)
  for (const outgoing of waiting) {
    try {
      const node = await outgoing.build(device)
      channel.send({ ...node, attrs: { ...node.attrs, offline: '1' } })
    } catch (err) {
      core.records.problems.push(`could not deliver ${outgoing.id} to ${device.jid}: ${(err as Error).message}`)
    }
  }
  return waiting.length
}

/** A message id in WhatsApp's style. */
export function messageId(): string {
  return `3EB0${randomBytes(9).toString('hex').toUpperCase()}`
}

/** The user and device of a JID (`user:device@server`). */
export function splitJid(jid: string): { user: string; device: number; server: string } {
  const [local, server = ''] = jid.split('@')
  const [user, device] = local.split(':')
  return { user: user.split('_')[0], device: device ? Number(device) : 0, server }
}

// --- Internal helpers ---

const chains = new WeakMap<LinkedDevice, Promise<void>>()

async function phoneReads(
  core: PeerCore,
  account: Account,
  sender: LinkedDevice,
  enc: { id: string; to: string; type: string; ciphertext: Buffer },
): Promise<void> {
  if (enc.type !== 'pkmsg' && enc.type !== 'msg') return void core.records.problems.push(`${account.pn} cannot read a ${enc.type} (message ${enc.id})`)
  let message: proto.Message
  try {
    message = await account.signal.decrypt(sender.lid, enc.type, enc.ciphertext)
  } catch (err) {
    return void core.records.problems.push(`${account.pn} could not decrypt ${enc.id} from ${sender.jid}: ${(err as Error).message}`)
  }
  const dsm = message.deviceSentMessage
  const read: PhoneMessage = {
    id: enc.id,
    from: sender.account.pn,
    fromDevice: sender.jid,
    to: dsm?.destinationJid ?? enc.to,
    message: dsm?.message ?? message,
    encryption: enc.type,
    sentByOwnDevice: !!dsm,
    at: Date.now(),
  }
  account.inbox.push(read)
  core.stats.decrypted++
  if (!read.sentByOwnDevice) phoneReceipt(core, account, read, 'delivery')
}

function forward(core: PeerCore, device: LinkedDevice | undefined, sender: LinkedDevice, node: BinaryNode, enc: BinaryNode): void {
  if (!device || device === sender) return
  if (device.account === sender.account) return // copies for the sender's own companions: not delivered
  deliver(core, device, {
    id: node.attrs.id,
    build: async () => ({
      tag: 'message',
      attrs: { id: node.attrs.id, from: sender.jid, sender_lid: sender.lid, t: core.now(), type: node.attrs.type ?? 'text', notify: sender.account.pushName },
      content: [enc],
    }),
  })
}

function senderAttrs(from: Account): Record<string, string> {
  if (from.addressing === 'pn') return { from: from.jid, sender_lid: from.lidJid }
  // A hidden number: the LID alone, no sender_pn.
  return { from: from.lidJid, ...(from.addressing === 'lid' ? { sender_pn: from.jid } : {}), addressing_mode: 'lid' }
}

function messageType(message: proto.IMessage): string {
  if (message.reactionMessage) return 'reaction'
  if (message.pollUpdateMessage) return 'poll'
  if (message.imageMessage || message.videoMessage || message.audioMessage || message.documentMessage || message.stickerMessage) return 'media'
  return 'text'
}
