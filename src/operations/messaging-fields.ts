import { dynamic, literal, never, refine, string, type, type Infer, type Struct } from '../schema/structs.ts'
import { coerceWhen, isAnything, isStringOrNumber } from '../schema/coerce-when.ts'
import { optionalText, phone, sizedArray, text } from '../schema/fields.ts'
import { parseRecipient } from '../domain/messaging/addresses.ts'
import { MAX_TEXT } from '../domain/messaging/actions.ts'
import { documentStruct } from '../schema/struct-schema.ts'
import { UNSURE, withFastCheck } from '../schema/fast-check.ts'

/** Longest text message (WhatsApp's own limit; the domain's, which an agent's reply keeps too). */
export { MAX_TEXT }
/** Longest media caption, buttons body or carousel text (WhatsApp: 1 024). */
export const MAX_CAPTION = 1024
/** Longest header or footer of an interactive message (WhatsApp: 60). */
export const MAX_HEADER = 60
const MAX_LABEL = 20
/** Reply buttons per buttons message (WhatsApp shows at most 3). */
export const MAX_BUTTONS = 3
/** Cards per carousel (WhatsApp: 10). */
export const MAX_CARDS = 10
const MAX_CARD_BUTTONS = 2

/** A recipient (`to`): a phone in any usual spelling, a group id, or a user id; normalised (see parseRecipient). */
export function recipient(): Struct<string, null> {
  const struct = refine(
    coerceWhen(string(), isStringOrNumber, v => parseRecipient(String(v)) ?? String(v)),
    'recipient',
    v => parseRecipient(v) === v || 'expected a phone number or a group id',
  )
  withFastCheck(struct, value => (isStringOrNumber(value) ? (parseRecipient(String(value)) ?? UNSURE) : UNSURE)) // a parsed recipient parses to itself
  return documentStruct(struct, {
    description:
      'Recipient: a phone number with the country code (any spelling, or `<digits>@s.whatsapp.net`), a group id (`<digits>@g.us`) or a LID (`<digits>@lid`).',
  })
}

/**
 * An absolute http(s) URL of at most `max` characters. `link`: a URL sent as text (a button's), with
 * no whitespace or control character inside and `//` after its scheme: new URL() encodes a space, drops
 * tabs and newlines and reads `https:example.com` or `https:\\example.com` as `https://example.com/`,
 * but the network takes the text as written (the Baileys adapter refuses such a button).
 */
function httpUrl(max = 2048, { link = false } = {}): Struct<string, null> {
  const struct = refine(text(max), 'url', v => {
    if (link && /[\s\u0000-\u001f\u007f]/.test(v.trim())) return 'expected a URL without spaces'
    if (link && !/^https?:\/\//i.test(v.trim())) return 'expected an http(s) URL'
    try {
      const url = new URL(v.trim())
      return url.protocol === 'http:' || url.protocol === 'https:' || 'expected an http(s) URL'
    } catch {
      return 'expected an http(s) URL'
    }
  })
  return documentStruct(struct, { format: 'uri', description: 'An absolute http(s) URL.' })
}

/** A list of `min` to `max` items (any other length is refused before an item is read); form bodies may carry it as JSON text or qs-nested fields (`buttons[0][type]=...`). */
export function list<T>(item: Struct<T, any>, min: number, max: number): Struct<T[], any> {
  const struct = coerceWhen(sizedArray(item, min, max), isAnything, toArray)
  return documentStruct(struct, {
    wire: schema => ({
      anyOf: [
        { ...schema, minItems: min, maxItems: max },
        { type: 'string', description: 'The list as JSON text (form and multipart bodies may also send qs-nested fields: `buttons[0][type]=...`).' },
      ],
    }),
  })
}

/** Fields common to the send operations 8 to 16: keys, recipient, optional schedule time. */
export const sendFields = {
  appkey: text(),
  authkey: text(256),
  to: recipient(),
  agendamento: documentStruct(optionalText(40), {
    description: 'Send later: `YYYY-MM-DD HH:MM:SS` in the gateway time zone (also `T` for the space, seconds optional).',
  }),
}

const urlButton = type({ type: literal('urlButton'), displaytext: text(MAX_LABEL), action: httpUrl(2048, { link: true }) })
const callButton = type({ type: literal('callButton'), displaytext: text(MAX_LABEL), action: phone() })
const replyButton = type({ type: literal('replyButton'), displaytext: text(MAX_LABEL), id: optionalText(256) })
const quickReplyButton = type({ type: literal('quickReplyButton'), displaytext: text(MAX_LABEL), id: text(256) })

/** A button of a buttons message (operation 15). */
export type WireButton = Infer<typeof replyButton | typeof urlButton | typeof callButton>

/** A button of a carousel card (operation 16). */
export type WireCardButton = Infer<typeof quickReplyButton | typeof urlButton | typeof callButton>

/** Operation 15's buttons: `replyButton` (displaytext, optional id), `urlButton`, `callButton`. */
export const button = byType<WireButton>({ replyButton, urlButton, callButton })

/** Operation 16's card buttons: `quickReplyButton` (displaytext, id), `urlButton`, `callButton`. */
const cardButton = byType<WireCardButton>({ quickReplyButton, urlButton, callButton })

/** A carousel card (operation 16). */
export const card = type({
  image_url: httpUrl(),
  title: text(MAX_HEADER),
  subtitle: optionalText(MAX_HEADER),
  description: optionalText(160),
  buttons: list(cardButton, 1, MAX_CARD_BUTTONS),
})

// --- Internal helpers ---

/** A struct that picks its shape by the value's `type`; an unknown type never validates. */
function byType<T>(shapes: Record<string, Struct<any, any>>): Struct<T, null> {
  const struct = dynamic(value => {
    const kind = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined
    return typeof kind === 'string' && Object.hasOwn(shapes, kind) ? shapes[kind] : (never() as unknown as Struct<any, any>)
  }) as unknown as Struct<T, null>
  return documentStruct(struct, { variants: Object.values(shapes) })
}

/** A list given as JSON text or as a qs-nested object with numeric keys, as an array (anything else as it is). */
export function toArray(value: unknown): unknown {
  if (typeof value === 'string') {
    try {
      return toArray(JSON.parse(value))
    } catch {
      return value
    }
  }
  const keys = typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.keys(value) : []
  const numbered = keys.length > 0 && keys.every(k => /^\d{1,3}$/.test(k))
  return numbered ? keys.sort((a, b) => Number(a) - Number(b)).map(k => (value as Record<string, unknown>)[k]) : value
}
