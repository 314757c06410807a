import QRCode from 'qrcode'
import { any, boolean, enums, literal, nullable, object, optional, refine, string, type } from '../schema/structs.ts'
import { coerceWhen, isString, lowerKeyword } from '../schema/coerce-when.ts'
import { GatewayError } from '../errors.ts'
import { answer, defineOperation, deviceByAppkey, type OperationContext, type OperationServices } from './operation.ts'
import { falseFlag, isAbsent, optionalFlag, optionalText, phone, text, trueFlag } from '../schema/fields.ts'
import { checkUrl } from '../security/url-policy.ts'
import { TransportError, type LinkChallenge, type SessionStatus } from '../ports/transport.ts'
import type { Device } from '../domain/devices.ts'
import { deviceErrors, errorAnswers, type AnswerCode } from './error-answers.ts'

/** Longest device name or chosen appkey. */
const MAX_DEVICE_NAME = 64

/** A device name: 1 to 64 printable characters. */
const deviceName = refine(text(MAX_DEVICE_NAME), 'deviceName', v => !/[\u0000-\u001f\u007f]/.test(v) || 'no control characters')

/** The network's refusals of a link that are none of operation 3's own (TransportError codes: a pairing code WhatsApp refuses, a connection closed meanwhile). */
const linkRefusals: AnswerCode[] = ['invalid', 'not-found', 'not-admin', 'not-connected']

/** The network's refusals of a status call (a host's transport may throw any TransportError): none is the device's or the request's, each the network's failure (502). */
const statusRefusals: AnswerCode[] = ['invalid', 'not-found', 'not-admin', 'not-connected']

/** Operation 3: QR code or pairing code for a (new or existing, unlinked) device. */
export const generateQrCode = defineOperation({
  name: 'generateQrCode',
  summary: 'Create a device (or reuse the one named by setAppkey) and return a QR code or, with phone, a pairing code',
  answer: answer({
    // Without `phone` the QR (a PNG data URI) and its share page; with it, the 8-digit pairing code.
    qrcode: optional(string()),
    link: optional(string()),
    code: optional(string()),
    appkey: optional(string()),
    id: string(),
    webhookSecret: string(),
  }),
  errors: ['invalid-input', 'unauthenticated', 'already-connected', 'link-failed', 'unreachable', 'timeout', 'failed', ...linkRefusals],
  // The spec's 400 also for a link request the network refuses (a pairing code for a phone WhatsApp will not take); its other refusals (a closed connection, a 403 or 404 of the server) are the network's failure, never a message's or a group's.
  answers: {
    'invalid-input': { status: 400, message: 'Parâmetros inválidos.' },
    invalid: { status: 400, message: 'Parâmetros inválidos.' },
    unauthenticated: { status: 401, message: 'Authkey inválida ou não encontrada.' },
    ...Object.fromEntries(linkRefusals.filter(code => code !== 'invalid').map(code => [code, errorAnswers.failed])),
  },
  schema: type({
    authkey: optional(any()),
    // Null or blank: absent, as every optional field.
    setAppkey: optional(coerceWhen(deviceName, isAbsent, () => undefined)),
    phone: optional(coerceWhen(phone(), isAbsent, () => undefined)),
    webhook: optionalText(2048),
  }),
  device: {
    ref: 'setAppkey',
    session: 'link',
    create: ({ setAppkey, webhook }, services) => ({ appkey: setAppkey, webhookUrl: webhookOption(webhook, services) }),
  },
  handle: ({ phone, webhook }, context) =>
    undoneOnFailure(context, async () => {
      const challenge = await context.services.devices.link(context.device, phone, webhookOption(webhook, context.services))
      if (challenge.kind !== 'code') return { message: 'QR code gerado.', ...(await qrAnswer(challenge, context)) }
      const { device, ensured } = context
      await context.services.links.rememberPairing(device.id) // the QR its share links showed no longer links it
      return { message: 'Código de pareamento gerado.', code: challenge.code, appkey: ensured?.appkey, id: device.id, webhookSecret: device.webhookSecret }
    }),
})

/** Operation 4: add a device by name and return its QR code. */
export const addDevice = defineOperation({
  field: 'conecteQR',
  name: 'addDevice',
  summary: 'Add a device by name (or reuse an unlinked one of that name) and return its QR code',
  answer: answer({ qrcode: string(), link: string(), id: string(), appkey: optional(string()), webhookSecret: string() }),
  errors: ['invalid-input', 'unauthenticated', 'link-failed', 'already-connected', 'unreachable'],
  schema: type({ authkey: text(256), message: deviceName, conecteQR: trueFlag(), webhook: optionalText(2048) }),
  device: { ref: 'message', session: 'link', create: ({ webhook }, services) => ({ webhookUrl: webhookOption(webhook, services) }) },
  handle: ({ webhook }, context) =>
    undoneOnFailure(context, async () => {
      const challenge = await context.services.devices.link(context.device, undefined, webhookOption(webhook, context.services)).catch(cause => {
        if (cause instanceof GatewayError || (cause instanceof TransportError && ['unreachable', 'already-connected'].includes(cause.code))) throw cause
        throw new GatewayError('link-failed', { cause })
      })
      return { message: 'Dispositivo adicionado.', ...(await qrAnswer(challenge, context)) }
    }),
})

/** Operation 5: a device's status, by id, name or appkey. */
export const deviceStatus = defineOperation({
  field: 'checkDispositivo',
  name: 'deviceStatus',
  summary: 'Status of a device of the account',
  answer: answer({
    dispositivo: object({
      id: string(),
      nome: string(),
      telefone: nullable(string()),
      webhook: nullable(string()),
      conectado: boolean(),
      estado: enums(['closed', 'connecting', 'linking', 'open', 'replaced', 'logged-out']),
      webhookSecret: string(),
    }),
  }),
  // A status call that fails (throws: 502, or another refusal of the network's, as 502 too), never answers (504), or cannot reach the network (503).
  errors: [...deviceErrors, 'failed', 'timeout', 'unreachable', ...statusRefusals],
  answers: Object.fromEntries(statusRefusals.map(code => [code, errorAnswers.failed])),
  schema: type({ authkey: text(256), message: text(), checkDispositivo: trueFlag() }),
  device: { ref: 'message', session: 'device' },
  async handle(_input, { services, device }) {
    const status = await services.devices.status(device)
    return {
      message: 'Dispositivo encontrado.',
      dispositivo: {
        id: device.id,
        nome: device.name,
        telefone: status.phone ?? (stillLinked(device, status) ? device.phone : undefined) ?? null,
        webhook: device.webhookUrl ?? null,
        conectado: status.connected,
        estado: status.state,
        webhookSecret: device.webhookSecret,
      },
    }
  },
})

/** Operation 6: delete a device (logging its session out), optionally with its appkey. */
export const deleteDevice = defineOperation({
  field: 'apagarDispositivo',
  name: 'deleteDevice',
  summary: 'Delete a device of the account',
  answer: answer({}),
  errors: [...deviceErrors, 'delete-failed'],
  answers: { unauthenticated: { status: 401, message: 'Authkey Invalida' } },
  schema: type({ authkey: text(Infinity), message: text(), apagarDispositivo: trueFlag(), apagarAppkey: optionalFlag() }), // as in createAgent
  device: { ref: 'message', session: 'device', deletes: true },
  async handle({ apagarAppkey }, { services, device }) {
    await services.devices.remove(device, { deleteAppkey: apagarAppkey === true })
    return { message: 'Dispositivo excluído com sucesso.' }
  },
})

/** Operation 7: revoke the device's QR share links. */
export const deleteShareLink = defineOperation({
  field: 'GerenciarLinks',
  name: 'deleteShareLink',
  summary: 'Revoke the QR share links of a device',
  answer: answer({}),
  errors: deviceErrors,
  schema: type({
    appkey: text(),
    authkey: text(256),
    message: falseFlag(),
    to: text(),
    GerenciarLinks: coerceWhen(literal('excluir'), isString, lowerKeyword),
  }),
  device: deviceByAppkey(),
  async handle({ to }, { services, account, device }) {
    const target = await services.devices.find(account, to)
    if (!target || target.id !== device.id) throw new GatewayError('device-not-found')
    await services.links.revokeAll(device)
    return { message: 'Link excluído com sucesso.' }
  },
})

// --- Internal helpers ---

/** Whether the phone the device last linked with is still its linked phone: not once the phone logged it out, nor while it is linked anew (docs/api.md, operation 5). */
function stillLinked(device: Device, status: SessionStatus): boolean {
  return device.linked && status.state !== 'logged-out' && status.state !== 'linking'
}

/** Run operation 3's or 4's work (starting the link, then saving its QR, share link or pairing mark); a device this request made is deleted again when any of it fails: a refused request changes nothing. */
async function undoneOnFailure<T>({ services, device, ensured }: OperationContext, work: () => Promise<T>): Promise<T> {
  return work().catch(async err => {
    if (ensured?.created) await services.devices.discard(device)
    throw err
  })
}

/**
 * The checked webhook URL, undefined when absent; `invalid-input` for one the URL policy refuses: the
 * webhook sender's own (its `accepts`, e.g. an address policy allowing one internal receiver) when it
 * has one, else public addresses only; any http(s) URL with `allowPrivateUrls`.
 */
function webhookOption(value: string | undefined, services: OperationServices): string | undefined {
  if (value === undefined) return undefined
  const { allowPrivateUrls, acceptsWebhookUrl } = services.settings
  const bySender = !allowPrivateUrls && acceptsWebhookUrl !== undefined
  const checked = checkUrl(value.trim(), { allowPrivate: allowPrivateUrls || bySender })
  if ('refused' in checked || (bySender && !acceptsWebhookUrl(checked.url.href))) throw new GatewayError('invalid-input')
  return checked.url.href
}

/** The QR as a PNG data URI (remembered for the share page), a new share link, and the device's keys. */
async function qrAnswer(challenge: LinkChallenge, { services, device, ensured, baseUrl }: OperationContext) {
  if (challenge.kind !== 'qr') throw new GatewayError('link-failed')
  await services.links.rememberQr(device.id, challenge.qr)
  const qrcode = await QRCode.toDataURL(challenge.qr, { margin: 2, scale: 6 })
  const link = `${baseUrl}/qr/${await services.links.create(device)}`
  return { qrcode, link, appkey: ensured?.appkey, id: device.id, webhookSecret: device.webhookSecret }
}
