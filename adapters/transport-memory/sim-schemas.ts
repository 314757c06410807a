import { array, boolean, coerce, enums, literal, nonempty, number, object, optional, refine, string } from 'superstruct'
import { coerceWhen, isBoolean, isNumber, isString, isStringOrNumber } from 'zapgate/adapter-kit'
import type { Struct } from 'superstruct'
import { parsePhone } from './addresses.ts'

/**
 * A phone number field: a string (or a JSON number) the network reads as a phone number (5 to 20
 * digits; `+`, spaces, dashes, brackets, dots and `@s.whatsapp.net` allowed), handed on as its digits:
 * every PhoneNetwork gets the same number, and none makes a phone of what is no number.
 */
const Phone = refine(
  coerce(
    coerceWhen(string(), isNumber, n => String(n)),
    string(),
    v => parsePhone(v) ?? v,
  ),
  'phone',
  v => parsePhone(v) === v || `not a phone number: ${v}`,
)
/** A number field that may arrive as a string (form bodies). */
const Num = refine(
  coerceWhen(number(), isString, s => Number(s.trim() === '' ? NaN : s)),
  'finite',
  Number.isFinite,
)
/** A flag field: `true`, `"true"`, `"1"` or their opposites. */
const Flag = coerceWhen(boolean(), isStringOrNumber, v => v === 'true' || v === '1' || v === 1)
const Text = nonempty(string())

/** `POST /_sim/scan`: a phone scans a device's QR (or enters its code): by QR, code, or `appkey` (the device's id, appkey or name) with the account's `authkey`. */
export const ScanBody = object({ phone: Phone, authkey: optional(string()), appkey: optional(string()), qr: optional(string()), code: optional(string()) })

/** The type of a `POST /_sim/send`. */
const MESSAGE_TYPES = ['text', 'image', 'video', 'audio', 'document', 'contact', 'location', 'reaction', 'delete', 'button'] as const

/** `POST /_sim/send`, read first for its type only. */
export const SendBody = object({ type: enums(MESSAGE_TYPES) })

const envelope = { from: Phone, to: Text }
const mediaFields = {
  caption: optional(string()),
  fileName: optional(string()),
  mimetype: optional(string()),
  base64: optional(string()),
  voiceNote: optional(Flag),
}

/** The full `POST /_sim/send` body of each type (unknown fields are dropped). */
export const messageSchemas: Record<(typeof MESSAGE_TYPES)[number], Struct<any, any>> = {
  text: object({ ...envelope, type: literal('text'), text: Text }),
  image: object({ ...envelope, type: literal('image'), ...mediaFields }),
  video: object({ ...envelope, type: literal('video'), ...mediaFields }),
  audio: object({ ...envelope, type: literal('audio'), ...mediaFields }),
  document: object({ ...envelope, type: literal('document'), ...mediaFields }),
  contact: object({ ...envelope, type: literal('contact'), name: Text, phone: Phone }),
  location: object({ ...envelope, type: literal('location'), latitude: Num, longitude: Num, text: optional(string()), name: optional(string()) }),
  reaction: object({ ...envelope, type: literal('reaction'), target: Text, emoji: string() }),
  delete: object({ ...envelope, type: literal('delete'), target: Text }),
  button: object({ ...envelope, type: literal('button'), target: Text, buttonId: Text, text: optional(string()), list: optional(Flag) }),
}

/** `POST /_sim/groups`: a phone creates a group; members as a list or a `-`/`,`-separated string. */
export const GroupBody = object({
  creator: Phone,
  subject: Text,
  members: optional(coerceWhen(array(Phone), isString, s => s.split(/[-,\s]+/).filter(Boolean))),
  description: optional(string()),
})

/** `POST /_sim/phones`: how a phone appears to others (LID, push name, hidden number). */
export const PhoneBody = object({
  phone: Phone,
  lid: optional(coerceWhen(string(), isBoolean, b => (b ? 'true' : ''))),
  pushName: optional(string()),
  hidePhone: optional(Flag),
})

/** `POST /_sim/unlink`: the phone removes a linked device (found by appkey with the gateway's routes, by id on a simulator server). */
export const UnlinkBody = object({ authkey: optional(string()), appkey: optional(Text), deviceId: optional(Text) })
