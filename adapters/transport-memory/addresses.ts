import { createHash, randomBytes, randomFillSync, randomInt } from 'node:crypto'

/** A parsed address: a phone number (digits), a group id, or a network user id still to resolve. */
type Address = { kind: 'phone'; phone: string } | { kind: 'group'; id: string } | { kind: 'lid'; lid: string }

/** Where invite links point; `<base><code>` is a group's invite link. */
export const INVITE_BASE = 'https://chat.whatsapp.com/'

/**
 * Parse `to`/`chat` the way the network reads it: digits (a leading `+`, spaces and dashes are
 * ignored), `<digits>@s.whatsapp.net` (or `@c.us`, with an optional `:<device>`), `<digits>@g.us`,
 * `<digits>@lid`. Undefined for anything else.
 */
export function parseAddress(input: unknown): Address | undefined {
  if (typeof input !== 'string') return undefined
  // The network's own forms, the ones the gateway hands over, are taken as they are: nothing to strip or rebuild.
  if (OWN_FORM.test(input)) {
    if (input.endsWith('@g.us')) return { kind: 'group', id: input }
    if (input.endsWith('@lid')) return { kind: 'lid', lid: input }
    if (input.length <= 20) return { kind: 'phone', phone: input }
  }
  const text = input.trim().toLowerCase()
  const at = text.lastIndexOf('@')
  if (at === -1) {
    const phone = text.replace(/^\+/, '').replace(/[\s\-().]/g, '')
    return PHONE.test(phone) ? { kind: 'phone', phone } : undefined
  }
  const user = text.slice(0, at).replace(/:\d+$/, '')
  const server = text.slice(at + 1)
  if (server === 'g.us') return /^\d{5,30}(-\d{5,15})?$/.test(user) ? { kind: 'group', id: `${user}@g.us` } : undefined
  if (server === 'lid') return /^\d{5,30}$/.test(user) ? { kind: 'lid', lid: `${user}@lid` } : undefined
  if (server === 's.whatsapp.net' || server === 'c.us') return PHONE.test(user) ? { kind: 'phone', phone: user } : undefined
  return undefined
}

/** The phone (digits) of an address that must be a phone, or undefined. */
export function parsePhone(input: unknown): string | undefined {
  const address = parseAddress(input)
  return address?.kind === 'phone' ? address.phone : undefined
}

/** The network user id of a phone: `<digits>@s.whatsapp.net`. */
export function userId(phone: string): string {
  return `${phone}@s.whatsapp.net`
}

/** The invite code in an invite code or link (`https://chat.whatsapp.com/<code>?...`), or undefined. */
export function parseInvite(input: unknown): string | undefined {
  if (typeof input !== 'string') return undefined
  let text = input.trim()
  const link = /^(?:https?:\/\/)?chat\.whatsapp\.com\/(?:invite\/)?([^?#/]+)/i.exec(text)
  if (link) text = link[1]
  return /^[A-Za-z0-9]{6,64}$/.test(text) ? text : undefined
}

/**
 * A message id shaped like the network's own: `3EB0` + 16 uppercase hex digits, written as
 * character codes into one flat string (hex-encoding, upper-casing, then prefixing made three
 * strings, the last a rope, slower to hash as a Map key and to serialise: half the cost, all told).
 */
export function messageId(): string {
  if (poolOffset + 8 > idPool.length) {
    randomFillSync(idPool)
    poolOffset = 0
  }
  for (let i = 0; i < 8; i++) {
    const byte = idPool[poolOffset + i]
    idCodes[4 + 2 * i] = HEX_CODES[byte >> 4]
    idCodes[5 + 2 * i] = HEX_CODES[byte & 15]
  }
  poolOffset += 8
  return String.fromCharCode(...idCodes)
}

/** Random bytes for message ids, drawn 4 KiB at a time (one call per id cost more than the rest of a send). */
const idPool = Buffer.alloc(4096)
let poolOffset = idPool.length
/** The character codes of the id being written: the `3EB0` prefix, then its 16 hex digits. */
const idCodes = [...'3EB0'.padEnd(20, '0')].map(c => c.charCodeAt(0))
const HEX_CODES = [...'0123456789ABCDEF'].map(c => c.charCodeAt(0))

/** A group id shaped like the network's own: `120363` + 12 digits + `@g.us`. */
export function groupId(): string {
  return `120363${digits(12)}@g.us`
}

/** An invite code: 22 letters and digits. */
export function inviteCode(): string {
  return Array.from({ length: 22 }, () => ALPHANUMERIC[randomInt(ALPHANUMERIC.length)]).join('')
}

/** A QR string shaped like the network's (`2@<ref>,<key>,<key>,<secret>`), unique per call. */
export function qrString(): string {
  const b64 = (n: number) => randomBytes(n).toString('base64')
  return `2@${b64(24)},${b64(32)},${b64(32)},${b64(32)}`
}

/** The network user id (LID) the simulated network gives `phone`: deterministic, 15 digits + `@lid`. */
export function lidFor(phone: string): string {
  const hash = createHash('sha256').update(`lid:${phone}`).digest()
  const n = hash.readBigUInt64BE(0) % 10n ** 14n
  return `1${n.toString().padStart(14, '0')}@lid`
}

/** Append to a list, dropping the oldest items past `limit`. */
export function pushBounded<T>(list: T[], item: T, limit: number): void {
  list.push(item)
  if (list.length > limit) list.splice(0, list.length - limit)
}

// --- Internal helpers ---

const PHONE = /^\d{5,20}$/
/** A phone (5 to 20 digits; longer ones are refused further on), a group id or a LID, as the network writes them. */
const OWN_FORM = /^\d{5,30}(-\d{5,15}@g\.us|@g\.us|@lid)?$/
const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

function digits(n: number): string {
  return Array.from({ length: n }, () => randomInt(10)).join('')
}
