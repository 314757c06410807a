import { literal, optional, string, type } from '../schema/structs.ts'
import { GatewayError } from '../errors.ts'
import { TransportError } from '../ports/transport.ts'
import { answer, defineOperation, deviceByAppkey } from './operation.ts'
import { falseFlag, optionalText, text, trueFlag } from '../schema/fields.ts'
import { coerceWhen, isNumber } from '../schema/coerce-when.ts'
import { fastCheckOf, withFastCheck } from '../schema/fast-check.ts'
import { documentStruct } from '../schema/struct-schema.ts'
import { isGroupAddress } from '../domain/messaging/addresses.ts'
import { OTP_CODES, otpCodeText } from '../domain/messaging/otp.ts'
import { recipient } from './messaging-fields.ts'
import { deviceErrors, queueErrors } from './error-answers.ts'

/** `to` of an OTP: a recipient, never a group (`accepts` refuses one; the OpenAPI document says so). */
const otpRecipient = documentStruct(recipient(), {
  description: 'Recipient: a phone number with the country code (any spelling, or `<digits>@s.whatsapp.net`) or a LID (`<digits>@lid`); never a group.',
  wire: schema => ({ ...schema, not: { pattern: '@[gG]\\.[uU][sS]\\s*$' } }),
})

/** `message` of an OTP send: an optional template that has its `{code}` (`accepts` refuses one without). */
const otpTemplate = documentStruct(optionalText(1024), {
  description: 'The text sent, a template with `{code}` (and optionally `{minutes}`); absent, a default text.',
  wire: schema => ({ ...schema, pattern: '^\\s*$|\\{code\\}' }),
})

/** `agendamento` of an OTP send: read only to refuse it (an OTP is never scheduled), blank aside. */
const neverScheduled = documentStruct(optionalText(40), {
  description: 'Not allowed: an OTP is never scheduled (any value but a blank one is refused).',
  wire: schema => ({ ...schema, pattern: '^\\s*$' }),
})

/** A code sent as a JSON number: its 6 digits (12345 is the code 012345, whose leading zero a number cannot keep); any other number as written. */
const codeDigits = (n: number): string => (Number.isInteger(n) && n >= 0 && n < OTP_CODES ? otpCodeText(n) : String(n))

/** `verificarOTP`: the code as text, or as a JSON number (zero-padded: codeDigits). */
const otpCode = (() => {
  const code = text(32)
  const check = fastCheckOf(code)!
  const struct = withFastCheck(coerceWhen(code, isNumber, codeDigits), value => check(isNumber(value) ? codeDigits(value) : value))
  return documentStruct(struct, { description: 'The 6-digit code, as text (or a JSON number: 12345 is the code `012345`).' })
})()

/** The text sent when `message` gives no template. */
const DEFAULT_TEMPLATE = 'Seu código de verificação é {code}. Ele expira em {minutes} minutos.'

/** Send a 6-digit OTP code to `to` through the device (`enviarOTP: "true"`, optional `message` template with `{code}`). */
export const sendOtp = defineOperation({
  field: 'enviarOTP',
  name: 'sendOtp',
  summary: 'Send a one-time code through the device',
  answer: answer({ id: optional(string()) }),
  errors: [...deviceErrors, ...queueErrors, 'invalid', 'not-found'],
  schema: type({ appkey: text(), authkey: text(256), to: otpRecipient, enviarOTP: trueFlag(), message: otpTemplate, agendamento: neverScheduled }),
  // Not to a group, never scheduled, and a template has its {code}.
  accepts: ({ to, message: template, agendamento }) =>
    !isGroupAddress(to) && agendamento === undefined && (template === undefined || template.includes('{code}')),
  device: deviceByAppkey('connected'),
  async handle({ to, message: template }, { services: { messaging, settings }, device }) {
    const { code, withdraw } = await messaging.otps.issue(device, to)
    const minutes = String(Math.max(1, Math.round(settings.otpTtlMs / 60_000)))
    const text = (template ?? DEFAULT_TEMPLATE).replaceAll('{code}', code).replaceAll('{minutes}', minutes)
    try {
      await messaging.otps.rememberText(device, text) // before the send: the phone's other linked devices may see it at once
      const id = await messaging.messenger.perform(device, { kind: 'send', to, message: { kind: 'text', text } }, { publish: false })
      return { message: 'Código OTP enviado.', id }
    } catch (err) {
      // Withdrawn only when the code certainly did not go out: a send that stalled or timed out on the network may still reach the phone, whose code must then work.
      if (!mayHaveBeenSent(err)) await withdraw().catch(() => undefined)
      throw err
    }
  },
})

/** Operation 18: check an OTP code; right once (`valid: true`), else 401 `OTP inválido ou expirado.` with `valid: false`. */
export const verifyOtp = defineOperation({
  field: 'verificarOTP',
  name: 'verifyOtp',
  summary: 'Verify a one-time code',
  answer: answer({ valid: literal(true) }),
  errors: [...deviceErrors, 'otp-invalid', 'rate-limited'],
  errorExtra: { valid: false },
  schema: type({ appkey: text(), authkey: text(256), to: recipient(), message: falseFlag(), verificarOTP: otpCode }),
  device: deviceByAppkey(),
  async handle({ to, verificarOTP: code }, { services, device }) {
    await services.rateLimits.otpVerification(device.id, to)
    const valid = await services.messaging.otps.verify(device, to, code.trim())
    if (!valid) throw new GatewayError('otp-invalid')
    return { message: 'OTP válido.', valid: true as const }
  },
})

/** A send failure whose message may still have reached the network (docs/decisions.md: a stalled send may complete later). */
function mayHaveBeenSent(err: unknown): boolean {
  return (err instanceof GatewayError && err.code === 'send-stalled') || (err instanceof TransportError && err.code === 'timeout')
}
