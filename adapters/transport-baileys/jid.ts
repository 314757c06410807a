/**
 * Pure helpers for WhatsApp addresses (JIDs): `<digits>@s.whatsapp.net` a user by phone number (PN),
 * `<id>@lid` a user by LID, `<id>@g.us` a group, `status@broadcast` statuses, `<id>@newsletter` channels.
 * A user JID may carry `:<device>` (and `_<agent>`) after the user part.
 */

/** The user part of a JID, without device or agent: `5511999990000` of `5511999990000:12@s.whatsapp.net`. */
export function userOf(jid: string): string {
  const at = jid.indexOf('@')
  const user = at === -1 ? jid : jid.slice(0, at)
  return user.split(':')[0].split('_')[0]
}

/** The server part of a JID (`s.whatsapp.net`, `lid`, `g.us`, ...), or '' without one. */
function serverOf(jid: string): string {
  const at = jid.indexOf('@')
  return at === -1 ? '' : jid.slice(at + 1)
}

/** A user JID without its device part: `<user>@<server>`. */
export function normalizeJid(jid: string): string {
  const server = serverOf(jid)
  return server ? `${userOf(jid)}@${server === 'c.us' ? 's.whatsapp.net' : server}` : jid
}

/** Whether `jid` is a group. */
export function isGroupJid(jid: string | null | undefined): jid is string {
  return typeof jid === 'string' && jid.endsWith('@g.us')
}

/** Whether `jid` is a user by LID (including hosted LIDs). */
export function isLidJid(jid: string | null | undefined): jid is string {
  return typeof jid === 'string' && (jid.endsWith('@lid') || jid.endsWith('@hosted.lid'))
}

/** Whether `jid` is a user by phone number (including hosted and legacy `@c.us`). */
export function isPnJid(jid: string | null | undefined): jid is string {
  return typeof jid === 'string' && (jid.endsWith('@s.whatsapp.net') || jid.endsWith('@hosted') || jid.endsWith('@c.us'))
}

/** Whether traffic of `jid` is outside chats the gateway reports (statuses, broadcast lists, channels). */
export function isIgnoredJid(jid: string | null | undefined): boolean {
  return typeof jid !== 'string' || jid.endsWith('@broadcast') || jid.endsWith('@newsletter')
}

/** The phone number (digits) of a PN JID, else undefined. */
export function phoneOf(jid: string | null | undefined): string | undefined {
  if (!isPnJid(jid)) return undefined
  const user = userOf(jid)
  return /^\d+$/.test(user) ? user : undefined
}

/** Digits of a phone number written with `+`, spaces, dashes, dots or parentheses; undefined if not one. */
export function parsePhone(input: string): string | undefined {
  const digits = input
    .trim()
    .replace(/^\+/, '')
    .replace(/[\s\-().]/g, '')
  return /^\d{7,15}$/.test(digits) ? digits : undefined
}

/** What a `to`/`chat` address names: a JID to use as is, or a phone number to look up. */
type Address = { kind: 'jid'; jid: string } | { kind: 'phone'; phone: string }

/**
 * Parse an address: a group, PN or LID JID passes through (device part dropped, `@c.us` becomes
 * `@s.whatsapp.net`); anything else must be a phone number. Undefined when it is neither.
 */
export function parseAddress(input: string): Address | undefined {
  if (typeof input !== 'string') return undefined
  const text = input.trim()
  if (text.includes('@')) {
    const jid = normalizeJid(text)
    const user = userOf(jid)
    if (isGroupJid(jid)) return /^\d+(-\d+)?$/.test(user) ? { kind: 'jid', jid } : undefined
    if (isPnJid(jid) || isLidJid(jid)) return /^\d+$/.test(user) ? { kind: 'jid', jid } : undefined
    return undefined
  }
  const phone = parsePhone(text)
  return phone ? { kind: 'phone', phone } : undefined
}

/**
 * The other form of a Brazilian mobile number: with the ninth digit removed (`55 DD 9XXXXXXXX`) or
 * added (`55 DD XXXXXXXX` starting 6-9). WhatsApp still registers many accounts under the old form.
 */
export function brazilianAlternative(phone: string): string | undefined {
  if (!phone.startsWith('55')) return undefined
  if (phone.length === 13 && phone[4] === '9') return phone.slice(0, 4) + phone.slice(5)
  if (phone.length === 12 && /[6-9]/.test(phone[4])) return `${phone.slice(0, 4)}9${phone.slice(4)}`
  return undefined
}

/** The invite code of an invite link (`https://chat.whatsapp.com/<code>?...`) or bare code; undefined if neither. */
export function parseInviteCode(input: string): string | undefined {
  if (typeof input !== 'string') return undefined
  let text = input.trim()
  const link = /^(?:https?:\/\/)?chat\.whatsapp\.com\/(?:invite\/)?([^?#/\s]+)/i.exec(text)
  if (link) text = link[1]
  return /^[A-Za-z0-9_-]{6,64}$/.test(text) ? text : undefined
}
