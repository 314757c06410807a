import { stripPhone } from '../../schema/fields.ts'
/** The recipient a `to` names, normalised: a phone number (8 to 15 digits in any spelling), `<digits>@s.whatsapp.net` or `<digits>@c.us` become the digits; a group or LID id stays (lower case). */
export function parseRecipient(input: string): string | undefined {
  const text = input.trim() // only the server is lower-cased, 15 characters at most (longer: none of them): a huge `to` is not lower-cased whole
  const at = text.lastIndexOf('@')
  if (at === -1) {
    const digits = /^\+?[\d\s().-]+$/.test(text) ? stripPhone(text) : '' // not a replace: megabytes of `5 5 5` are anyone's to send
    return PHONE.test(digits) ? digits : undefined
  }
  const user = text.slice(0, at)
  const server = text.slice(at + 1, at + 16).toLowerCase()
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

const PHONE = /^\d{8,15}$/
