import { literal, optional, string, type } from 'superstruct'
import { GatewayError, Messages } from '../errors.ts'
import { defineOperation } from '../http/operation.ts'
import { falseFlag, optionalText, text, trueFlag } from '../http/fields.ts'
import { isGroupAddress } from '../domain/messaging/addresses.ts'
import { recipient } from './messaging-fields.ts'
import { requireDevice } from './send-support.ts'
import { answer, deviceErrors, queueErrors, required } from './answers.ts'

/** The text sent when `message` gives no template. */
const DEFAULT_TEMPLATE = 'Seu código de verificação é {code}. Ele expira em {minutes} minutos.'

/** Send a 6-digit OTP code to `to` through the device (`enviarOTP: "true"`, optional `message` template with `{code}`). */
export const sendOtp = defineOperation({
  field: 'enviarOTP',
  name: 'sendOtp',
  summary: 'Send a one-time code through the device',
  answer: answer({ id: optional(string()) }),
  errors: [...deviceErrors, ...queueErrors],
  schema: type({ appkey: text(), authkey: text(256), to: recipient(), enviarOTP: trueFlag(), message: optionalText(1024), agendamento: optionalText(40) }),
  async handle({ to, message: template, agendamento, ...keys }, context) {
    if (isGroupAddress(to) || agendamento !== undefined || (template !== undefined && !template.includes('{code}'))) {
      throw new GatewayError(401, Messages.required)
    }
    const { device } = await requireDevice(context, keys)
    const { messaging, options } = context.services
    await messaging.messenger.requireConnected(device)
    const { code, withdraw } = await messaging.otps.issue(device, to)
    const minutes = String(Math.max(1, Math.round(options.messaging.otpTtlMs / 60_000)))
    const text = (template ?? DEFAULT_TEMPLATE).replaceAll('{code}', code).replaceAll('{minutes}', minutes)
    try {
      const id = await messaging.messenger.perform(device, { kind: 'send', to, message: { kind: 'text', text } }, { publish: false })
      return { message: 'Código OTP enviado.', id }
    } catch (err) {
      await withdraw().catch(() => undefined)
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
  errors: [
    { ...required, extra: { valid: false } },
    { status: 401, message: Messages.otpInvalid, extra: { valid: false } },
    { status: 404, message: Messages.deviceNotFound, extra: { valid: false } },
  ],
  schema: type({ appkey: text(), authkey: text(256), to: recipient(), message: falseFlag(), verificarOTP: text(32) }),
  invalid: { status: 401, message: Messages.required, extra: { valid: false } },
  async handle({ to, verificarOTP: code, ...keys }, context) {
    try {
      const { device } = await requireDevice(context, keys)
      await context.services.rateLimits.otpVerification(device.id, to)
      const valid = await context.services.messaging.otps.verify(device, to, code.trim())
      if (!valid) throw new GatewayError(401, Messages.otpInvalid)
      return { message: 'OTP válido.', valid: true as const }
    } catch (err) {
      if (err instanceof GatewayError) {
        // The same class with valid: false (an AuthenticationError stays one: the failed-authkey limit counts it).
        const Same = err.constructor as typeof GatewayError
        throw new Same(err.status, err.message, { ...err.extra, valid: false }, { cause: err.cause, headers: err.headers })
      }
      throw err
    }
  },
})
