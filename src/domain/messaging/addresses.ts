/** Recipients as the send operations read them, normalised to the forms the Transport port accepts. */

/**
 * The recipient a `to` names, normalised: a phone number becomes its digits (a leading `+`, spaces,
 * dots, dashes and parentheses are dropped; 8 to 15 digits), `<digits>@s.whatsapp.net` and
 * `<digits>@c.us` become the digits, `<digits>@g.us` (also the older `<digits>-<digits>@g.us`) and
 * `<digits>@lid` stay as they are (lower case). Undefined for anything else.
 */
export function parseRecipient(input: string): string | undefined {
  const text = input.trim().toLowerCase()
  const at = text.lastIndexOf('@')
  if (at === -1) {
    const digits = text.replace(/[\s().+-]/g, '')
    return /^\+?[\d\s().-]+$/.test(text) && PHONE.test(digits) ? digits : undefined
  }
  const user = text.slice(0, at)
  const server = text.slice(at + 1)
  if (server === 'g.us') return /^\d{5,30}(-\d{5,15})?$/.test(user) ? `${user}@g.us` : undefined
  if (server === 'lid') return /^\d{5,30}$/.test(user) ? `${user}@lid` : undefined
  if (server === 's.whatsapp.net' || server === 'c.us') {
    const phone = user.replace(/:\d+$/, '')
    return PHONE.test(phone) ? phone : undefined
  }
  return undefined
}

/** Whether a normalised recipient is a group id. */
export function isGroupAddress(address: string): boolean {
  return address.endsWith('@g.us')
}

// --- Internal helpers ---

const PHONE = /^\d{8,15}$/
