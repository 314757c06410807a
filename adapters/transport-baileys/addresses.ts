import { TransportError } from 'zapgate'
import { BoundedMap } from 'zapgate/adapter-kit'
import { socketCall } from './errors.ts'
import { brazilianAlternative, isGroupJid, isLidJid, normalizeJid, parseAddress, phoneOf, userOf } from './jid.ts'
import type { SocketLike } from './types.ts'

/**
 * Turns `to` addresses into JIDs. JIDs (group, PN, LID) pass through; a phone number is looked up with
 * onWhatsApp, which answers the canonical JID (Brazilian numbers with or without the ninth digit as
 * registered) and leaves out numbers that are not on WhatsApp. When a Brazilian mobile is not found,
 * the other form (with or without the 9) is tried. Answers are cached, bounded; misses for a shorter time.
 */
export class AddressResolver {
  private readonly cache = new BoundedMap<string, string | null>(10_000, 24 * 3_600_000)

  constructor(private readonly missTtlMs = 10 * 60_000) {}

  /** The JID for `to`; TransportError('invalid') for a malformed address, ('not-found') for a number not on WhatsApp or a LID no account has. */
  async resolve(socket: SocketLike, to: string, timeoutMs: number): Promise<string> {
    const address = parseAddress(to)
    if (!address) throw new TransportError('invalid', `not a phone number or WhatsApp id: ${String(to)}`)
    if (address.kind === 'jid') return isLidJid(address.jid) ? this.knownLid(socket, address.jid, timeoutMs) : address.jid
    const cached = this.cache.get(address.phone)
    if (cached === null) throw notOnWhatsApp(address.phone)
    if (cached) return cached
    let jid = await lookup(socket, address.phone, timeoutMs)
    const alternative = jid ? undefined : brazilianAlternative(address.phone)
    if (alternative) jid = await lookup(socket, alternative, timeoutMs)
    this.cache.set(address.phone, jid ?? null, jid ? undefined : this.missTtlMs)
    if (!jid) throw notOnWhatsApp(address.phone)
    return jid
  }

  /**
   * Look up many phone numbers at once (a group's members): one onWhatsApp query per LOOKUP_BATCH numbers
   * not cached yet, whose found JIDs are cached as resolve's lookups would cache them (a Brazilian mobile
   * found under its other form, with or without the ninth digit, too). What a batch leaves unanswered
   * (not found, a JID that names none of the numbers asked for, no answer at all) is left to resolve,
   * one number at a time, so every answer stays resolve's.
   */
  async prime(socket: SocketLike, inputs: string[], timeoutMs: number): Promise<void> {
    const phones = new Set<string>()
    for (const input of inputs) {
      const address = parseAddress(input)
      if (address?.kind === 'phone' && this.cache.get(address.phone) === undefined) phones.add(address.phone)
    }
    const pending = [...phones]
    for (let start = 0; start < pending.length; start += LOOKUP_BATCH) {
      const batch = pending.slice(start, start + LOOKUP_BATCH)
      const results = await socketCall('number lookup', timeoutMs, () => socket.onWhatsApp(...batch))
      if (!Array.isArray(results)) continue
      const found = new Map<string, string>()
      for (const result of results) {
        const phone = result?.exists !== false && typeof result?.jid === 'string' ? phoneOf(result.jid) : undefined
        if (phone) found.set(phone, result.jid)
      }
      for (const phone of batch) {
        const alternative = brazilianAlternative(phone)
        const jid = found.get(phone) ?? (alternative ? found.get(alternative) : undefined)
        if (jid) this.cache.set(phone, jid)
      }
    }
  }

  /**
   * A LID as the network knows it: its devices asked for once (Baileys' device query, whose answer its
   * send reuses from its cache), then remembered as resolve remembers numbers. A LID no account has
   * has no device: WhatsApp takes a message to it all the same and delivers it to nobody, so it is
   * refused here, not-found, as a number not on WhatsApp is (before, the send answered 200).
   */
  private async knownLid(socket: SocketLike, lid: string, timeoutMs: number): Promise<string> {
    const cached = this.cache.get(lid)
    if (cached === null) throw noSuchLid(lid)
    if (cached || !socket.getUSyncDevices) return lid
    const user = userOf(lid)
    const devices = await socketCall('device lookup', timeoutMs, () => socket.getUSyncDevices!([lid], true, false))
    const known = Array.isArray(devices) && devices.some(device => device.user === user)
    this.cache.set(lid, known ? lid : null, known ? undefined : this.missTtlMs)
    if (!known) throw noSuchLid(lid)
    return lid
  }

  /** Like resolve, but a group id is refused (group participants must be users). */
  async resolveUser(socket: SocketLike, to: string, timeoutMs: number): Promise<string> {
    if (isGroupJid(parseAddress(to)?.kind === 'jid' ? to.trim() : undefined)) throw new TransportError('invalid', `a group cannot be a participant: ${to}`)
    return this.resolve(socket, to, timeoutMs)
  }
}

/**
 * A JID named as the gateway names chats (as IncomingMessage does): the group id, a user's phone, else
 * their LID (its phone when the socket's LID mappings know it). What a send answers as its chat, and
 * the chat of a delivery failure.
 */
export async function chatName(jid: string, socket: SocketLike): Promise<string> {
  const normalized = normalizeJid(jid)
  if (isGroupJid(normalized)) return normalized
  const lidPhone = async () => phoneOf((await socket.signalRepository?.lidMapping.getPNForLID(normalized).catch(() => null)) ?? undefined)
  return phoneOf(normalized) ?? (isLidJid(normalized) ? await lidPhone() : undefined) ?? normalized
}

// --- Internal helpers ---

/** The most numbers prime asks WhatsApp about in one query. */
const LOOKUP_BATCH = 100

/**
 * The JID WhatsApp registers `phone` under, or undefined when it is not on WhatsApp (Baileys leaves
 * such numbers out of the list). An undefined answer is no answer (the USync query returned
 * nothing): TransportError('failed'), not "not on WhatsApp", and never cached.
 */
async function lookup(socket: SocketLike, phone: string, timeoutMs: number): Promise<string | undefined> {
  const results = await socketCall('number lookup', timeoutMs, () => socket.onWhatsApp(phone))
  if (!Array.isArray(results)) throw new TransportError('failed', `number lookup: WhatsApp gave no answer for ${phone}`)
  return results.find(result => result.exists !== false && result.jid)?.jid
}

function noSuchLid(lid: string): TransportError {
  return new TransportError('not-found', `no WhatsApp account has the LID ${lid}`)
}

function notOnWhatsApp(phone: string): TransportError {
  return new TransportError('not-found', `${phone} is not on WhatsApp`)
}
