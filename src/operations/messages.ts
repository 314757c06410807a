import { refine } from '../schema/structs.ts'
import { coerceWhen, isNumber } from '../schema/coerce-when.ts'
import { optionalText, phone, text } from '../schema/fields.ts'
import { MAX_CAPTION, MAX_TEXT } from './messaging-fields.ts'
import { sendOperation, sendOrSchedule } from './send-support.ts'
import { documentStruct } from '../schema/struct-schema.ts'
import { mediaErrors, sendErrors } from './error-answers.ts'

/** Operation 8 (the default of /api/create-message): send a text. */
export const sendText = sendOperation({
  name: 'sendText',
  summary: 'Send a text message',
  fields: { message: text(MAX_TEXT) },
  handle: sendOrSchedule('Mensagem de texto enviada.', ({ message: text, to }) => ({ kind: 'send', to, message: { kind: 'text', text } })),
})

/** Operation 9: send a file (URL, base64, data URI or uploaded part) as image, video, audio or document. */
export const sendMedia = sendOperation({
  field: 'file',
  name: 'sendMedia',
  summary: 'Send a media file',
  errors: [...sendErrors, ...mediaErrors],
  fields: {
    file: documentStruct(text(Number.MAX_SAFE_INTEGER), {
      description: 'An http(s) URL, base64, a base64 data URI, or (multipart) an uploaded file part named `file`.',
    }),
    message: optionalText(200),
    descricao: optionalText(MAX_CAPTION),
    format: optionalText(16),
  },
  handle: sendOrSchedule('Arquivo enviado.', async ({ file, message: fileName, descricao: caption, format, to }, { uploads, services, mediaHold }) => {
    const source = uploads.get('file') ?? file
    return { kind: 'send', to, message: await services.messaging.media.message({ source, fileName, caption, format, hold: mediaHold }) }
  }),
})

/** Operation 10: share a contact card (`contact` = name, `message` = the contact's phone). */
export const sendContact = sendOperation({
  field: 'contact',
  name: 'sendContact',
  summary: 'Send a contact card',
  fields: { contact: text(256), message: phone() },
  handle: sendOrSchedule('Contato enviado.', ({ contact: name, message: phone, to }) => ({
    kind: 'send',
    to,
    message: { kind: 'contact', name: name.trim(), phone },
  })),
})

/** Operation 11: send a location (decimal `latitude` and `longitude`, optional text in `message`). */
export const sendLocation = sendOperation({
  field: ['latitude', 'longitude'],
  name: 'sendLocation',
  summary: 'Send a location',
  fields: { latitude: coordinate(90), longitude: coordinate(180), message: optionalText(1024) },
  handle: sendOrSchedule('Localização enviada.', ({ latitude, longitude, message: text, to }) => ({
    kind: 'send',
    to,
    message: { kind: 'location', latitude: Number(latitude), longitude: Number(longitude), ...(text ? { text } : {}) },
  })),
})

// --- Internal helpers ---

/** A decimal coordinate within ±`limit` (as text: `-23.5505`; a JSON number as its decimal text). */
function coordinate(limit: number) {
  const struct = refine(coerceWhen(text(32), isNumber, decimalText), 'coordinate', v => {
    const s = v.trim()
    return (/^[-+]?\d{1,3}(\.\d{1,15})?$/.test(s) && Math.abs(Number(s)) <= limit) || `expected a decimal number within ±${limit}`
  })
  return documentStruct(struct, { description: `Decimal degrees as text, within ±${limit} (e.g. \`-23.5505\`).` })
}

/** A number as plain decimal text: String() writes one under 1e-6 in exponent form (`1e-7`), which is no decimal; it is written to 15 decimals (the most a coordinate takes). */
function decimalText(n: number): string {
  const s = String(n)
  return /e/i.test(s) && Math.abs(n) < 1 ? n.toFixed(15).replace(/\.?0+$/, '') : s
}
