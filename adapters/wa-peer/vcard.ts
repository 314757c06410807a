/**
 * The vCard a phone shares for a contact `name` with number `phone` (digits): the name as a vCard text
 * value (a backslash, `,` and `;` escaped, a line break written `\n`), as the simulated network and
 * the Baileys adapter write it, so no text of a name starts a line (a TEL of its own) or ends the FN.
 */
export function contactVcard(name: string, phone: string): string {
  return `BEGIN:VCARD\nVERSION:3.0\nFN:${vcardText(name)}\nTEL;type=CELL;waid=${phone}:+${phone}\nEND:VCARD`
}

function vcardText(value: string): string {
  return value
    .replace(/\\/g, '\\\\')
    .replace(/[,;]/g, m => `\\${m}`)
    .replace(/\r\n|[\r\n\u0085\u2028\u2029]/g, '\\n')
}
