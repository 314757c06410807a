import { GatewayError, type ErrorCode } from '../errors.ts'
import { TransportError } from '../ports/transport.ts'
import { StorageUnavailableError } from '../store/guarded-storage.ts'

/** What the gateway can be refused for: its own codes and the transport's (same name, same answer). */
export type AnswerCode = ErrorCode | TransportError['code'] | 'storage-unavailable' | 'internal'

/** An error answer: the body's `status` and `message` (plus `extra` fields), and a `Retry-After`. */
export interface ErrorAnswer {
  status: number
  message: string
  /** Extra fields of the error body (`valid: false` for OTP verification). */
  extra?: Record<string, unknown>
  retryAfterSeconds?: number
}

/** The error messages of the API, as the spec spells them (and the gateway's own, beyond its table). */
export const Messages = {
  required: 'validation.required',
  emailTaken: 'Usuario ja registrado com este e-mail.',
  agentAuth: 'Authkey invalida ou expirada.',
  qrAuth: 'Authkey inválida ou não encontrada.',
  qrInvalid: 'Parâmetros inválidos.',
  addDeviceFailed: 'Erro ao adicionar dispositivo.',
  deviceNotFound: 'Nenhum dispositivo encontrado.',
  deleteAuth: 'Authkey Invalida',
  deleteFailed: 'Ocorreu um erro ao excluir o dispositivo.',
  groupNotFound: 'Grupo não encontrado.',
  inviteInvalid: 'Convite inválido ou expirado.',
  otpInvalid: 'OTP inválido ou expirado.',
  // Beyond the spec's table (DESIGN.md, HTTP contract 3).
  badJson: 'JSON inválido.',
  notObject: 'Corpo da requisição inválido.',
  tooLarge: 'Corpo da requisição grande demais.',
  unsupportedType: 'Tipo de conteúdo não suportado.',
  bodyTimeout: 'Tempo esgotado ao receber a requisição.',
  disconnected: 'Dispositivo desconectado.',
  alreadyConnected: 'Dispositivo já conectado.',
  rateLimited: 'Muitas requisições. Tente novamente mais tarde.',
  storageDown: 'Armazenamento indisponível. Tente novamente mais tarde.',
  accountNotFound: 'Conta não encontrada.',
  transportTimeout: 'A rede de mensagens não respondeu a tempo.',
  transportFailed: 'Falha na rede de mensagens.',
  networkUnreachable: 'O WhatsApp não pode ser acessado a partir deste servidor. Tente novamente mais tarde.',
  internal: 'Erro interno.',
  sendQueueFull: 'Fila de envio do dispositivo cheia. Tente novamente mais tarde.',
  sendQueueTimeout: 'Tempo esgotado na fila de envio do dispositivo; a mensagem não foi enviada.',
  sendStalled: 'O envio não foi concluído a tempo; a mensagem pode não ter sido entregue.',
  shuttingDown: 'O gateway está sendo encerrado. Tente novamente em instantes.',
  holderUnavailable: 'O dispositivo está mudando de instância. Tente novamente em instantes.',
  instanceFull: 'Esta instância atingiu o limite de dispositivos. Tente novamente em instantes.',
  quotaExceeded: 'Limite da conta atingido.',
  forwardRefused: 'Requisição encaminhada recusada: assinatura inválida ou expirada.',
  messageNotFound: 'Mensagem não encontrada nesta conversa.',
  mediaRefused: 'URL do arquivo não permitida: use http(s) de um endereço público.',
  mediaTooLarge: 'Arquivo maior que o limite permitido.',
  mediaBudget: 'Servidor ocupado com outros arquivos. Tente novamente em instantes.',
  mediaTimeout: 'Tempo esgotado ao baixar o arquivo da URL.',
  mediaUnreachable: 'Não foi possível baixar o arquivo da URL.',
  mediaBadStatus: 'O servidor do arquivo respondeu com erro.',
  cardImageInvalid: 'A imagem do cartão (image_url) não é uma imagem JPEG, PNG ou WebP.',
} as const

/**
 * The answer to every code, unless an operation declares its own (the spec words some per
 * operation: an unknown authkey of operation 3 is `Authkey inválida ou não encontrada.`).
 */
export const errorAnswers: Record<AnswerCode, ErrorAnswer> = {
  'invalid-input': { status: 401, message: Messages.required },
  unauthenticated: { status: 401, message: Messages.required },
  'rate-limited': { status: 429, message: Messages.rateLimited, retryAfterSeconds: 5 },
  'body-malformed': { status: 400, message: Messages.badJson },
  'body-not-object': { status: 400, message: Messages.notObject },
  'body-too-large': { status: 413, message: Messages.tooLarge },
  'body-unsupported-type': { status: 415, message: Messages.unsupportedType },
  'body-timeout': { status: 408, message: Messages.bodyTimeout },
  'email-taken': { status: 409, message: Messages.emailTaken },
  'account-not-found': { status: 404, message: Messages.accountNotFound },
  'device-not-found': { status: 404, message: Messages.deviceNotFound },
  'link-failed': { status: 404, message: Messages.addDeviceFailed },
  'already-connected': { status: 409, message: Messages.alreadyConnected },
  'not-connected': { status: 409, message: Messages.disconnected },
  'delete-failed': { status: 500, message: Messages.deleteFailed },
  'message-not-found': { status: 404, message: Messages.messageNotFound },
  'group-not-found': { status: 404, message: Messages.groupNotFound },
  'invite-invalid': { status: 404, message: Messages.inviteInvalid },
  'otp-invalid': { status: 401, message: Messages.otpInvalid },
  'send-queue-full': { status: 429, message: Messages.sendQueueFull, retryAfterSeconds: 5 },
  'send-queue-timeout': { status: 504, message: Messages.sendQueueTimeout },
  'send-stalled': { status: 504, message: Messages.sendStalled },
  'shutting-down': { status: 503, message: Messages.shuttingDown, retryAfterSeconds: 5 },
  'holder-unavailable': { status: 503, message: Messages.holderUnavailable, retryAfterSeconds: 5 },
  'instance-full': { status: 503, message: Messages.instanceFull, retryAfterSeconds: 30 },
  'quota-exceeded': { status: 429, message: Messages.quotaExceeded, retryAfterSeconds: 60 },
  'forward-refused': { status: 403, message: Messages.forwardRefused },
  'media-refused': { status: 400, message: Messages.mediaRefused },
  'media-bad-status': { status: 400, message: Messages.mediaBadStatus },
  'media-timeout': { status: 400, message: Messages.mediaTimeout },
  'media-unreachable': { status: 400, message: Messages.mediaUnreachable },
  'media-too-large': { status: 413, message: Messages.mediaTooLarge },
  'media-budget-exceeded': { status: 429, message: Messages.mediaBudget, retryAfterSeconds: 5 },
  'card-image-invalid': { status: 400, message: Messages.cardImageInvalid },
  // The transport's codes (TransportError)
  'not-found': { status: 404, message: 'Destino não encontrado na rede.' },
  'not-admin': { status: 403, message: 'O dispositivo não é administrador do grupo.' },
  timeout: { status: 504, message: Messages.transportTimeout },
  unreachable: { status: 503, message: Messages.networkUnreachable, retryAfterSeconds: 30 },
  invalid: { status: 400, message: 'Mensagem recusada pela rede.' },
  failed: { status: 502, message: Messages.transportFailed },
  // Anything else
  'storage-unavailable': { status: 503, message: Messages.storageDown, retryAfterSeconds: 5 },
  internal: { status: 500, message: Messages.internal },
}

/** The code anything thrown inside the gateway is answered by (`internal` for the unexpected). */
export function answerCodeOf(err: unknown): AnswerCode {
  if (err instanceof GatewayError || err instanceof TransportError) return err.code
  if (err instanceof StorageUnavailableError) return 'storage-unavailable'
  return 'internal'
}

/**
 * The answer to `err`: the operation's own answer for its code when it has one, else the table's;
 * a GatewayError's detail is added to the message and its retry time replaces the table's.
 */
export function errorAnswer(err: unknown, own?: Partial<Record<AnswerCode, ErrorAnswer>>): ErrorAnswer {
  const code = answerCodeOf(err)
  const answer = own?.[code] ?? errorAnswers[code]
  if (!(err instanceof GatewayError) || (err.detail === undefined && err.retryAfterSeconds === undefined)) return answer
  return {
    ...answer,
    message: err.detail === undefined ? answer.message : `${answer.message} (${err.detail})`,
    retryAfterSeconds: err.retryAfterSeconds ?? answer.retryAfterSeconds,
  }
}
