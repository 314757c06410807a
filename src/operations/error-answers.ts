import { GatewayError, type ErrorCode } from '../errors.ts'
import { TransportError } from '../ports/transport.ts'
import { StorageUnavailableError } from '../store/guarded-storage.ts'

/** What the gateway can be refused for: its own codes and the transport's (same name, same answer). */
export type AnswerCode = ErrorCode | TransportError['code'] | 'storage-unavailable' | 'internal'

/** An error answer: the body's `status` and `message` (plus `extra` fields), and a `Retry-After`. */
export interface ErrorAnswer {
  status: number
  message: string
  extra?: Record<string, unknown>
  retryAfterSeconds?: number
}

/** The answer to every code, unless an operation declares its own. */
export const errorAnswers: Record<AnswerCode, ErrorAnswer> = {
  'invalid-input': { status: 401, message: 'validation.required' },
  unauthenticated: { status: 401, message: 'validation.required' },
  'rate-limited': { status: 429, message: 'Muitas requisições. Tente novamente mais tarde.', retryAfterSeconds: 5 },
  'body-malformed': { status: 400, message: 'JSON inválido.' },
  'body-not-object': { status: 400, message: 'Corpo da requisição inválido.' },
  'body-too-large': { status: 413, message: 'Corpo da requisição grande demais.' },
  'body-unsupported-type': { status: 415, message: 'Tipo de conteúdo não suportado.' },
  'body-timeout': { status: 408, message: 'Tempo esgotado ao receber a requisição.' },
  'email-taken': { status: 409, message: 'Usuario ja registrado com este e-mail.' },
  'account-not-found': { status: 404, message: 'Conta não encontrada.' },
  'device-not-found': { status: 404, message: 'Nenhum dispositivo encontrado.' },
  'link-failed': { status: 404, message: 'Erro ao adicionar dispositivo.' },
  'already-connected': { status: 409, message: 'Dispositivo já conectado.' },
  'not-connected': { status: 409, message: 'Dispositivo desconectado.' },
  'delete-failed': { status: 500, message: 'Ocorreu um erro ao excluir o dispositivo.' },
  'message-not-found': { status: 404, message: 'Mensagem não encontrada nesta conversa.' },
  'group-not-found': { status: 404, message: 'Grupo não encontrado.' },
  'invite-invalid': { status: 404, message: 'Convite inválido ou expirado.' },
  'otp-invalid': { status: 401, message: 'OTP inválido ou expirado.' },
  'send-queue-full': { status: 429, message: 'Fila de envio do dispositivo cheia. Tente novamente mais tarde.', retryAfterSeconds: 5 },
  'send-queue-timeout': { status: 504, message: 'Tempo esgotado na fila de envio do dispositivo; a mensagem não foi enviada.' },
  'send-stalled': { status: 504, message: 'O envio não foi concluído a tempo; a mensagem pode não ter sido entregue.' },
  'shutting-down': { status: 503, message: 'O gateway está sendo encerrado. Tente novamente em instantes.', retryAfterSeconds: 5 },
  'holder-unavailable': { status: 503, message: 'O dispositivo está mudando de instância. Tente novamente em instantes.', retryAfterSeconds: 5 },
  'instance-full': { status: 503, message: 'Esta instância atingiu o limite de dispositivos. Tente novamente em instantes.', retryAfterSeconds: 30 },
  'quota-exceeded': { status: 429, message: 'Limite da conta atingido.', retryAfterSeconds: 60 },
  'forward-refused': { status: 403, message: 'Requisição encaminhada recusada: assinatura inválida ou expirada.' },
  'media-refused': { status: 400, message: 'URL do arquivo não permitida: use http(s) de um endereço público.' },
  'media-bad-status': { status: 400, message: 'O servidor do arquivo respondeu com erro.' },
  'media-timeout': { status: 400, message: 'Tempo esgotado ao baixar o arquivo da URL.' },
  'media-unreachable': { status: 400, message: 'Não foi possível baixar o arquivo da URL.' },
  'media-too-large': { status: 413, message: 'Arquivo maior que o limite permitido.' },
  'media-budget-exceeded': { status: 429, message: 'Servidor ocupado com outros arquivos. Tente novamente em instantes.', retryAfterSeconds: 5 },
  'card-image-invalid': { status: 400, message: 'A imagem do cartão (image_url) não é uma imagem JPEG, PNG ou WebP.' },
  // The transport's codes (TransportError)
  'not-found': { status: 404, message: 'Destino não encontrado na rede.' },
  'not-admin': { status: 403, message: 'O dispositivo não é administrador do grupo.' },
  timeout: { status: 504, message: 'A rede de mensagens não respondeu a tempo.' },
  unreachable: { status: 503, message: 'O WhatsApp não pode ser acessado a partir deste servidor. Tente novamente mais tarde.', retryAfterSeconds: 30 },
  invalid: { status: 400, message: 'Mensagem recusada pela rede.' },
  failed: { status: 502, message: 'Falha na rede de mensagens.' },
  // Anything else
  'storage-unavailable': { status: 503, message: 'Armazenamento indisponível. Tente novamente mais tarde.', retryAfterSeconds: 5 },
  internal: { status: 500, message: 'Erro interno.' },
}

/** The refusals of an operation that names a device of the account by `appkey`. */
export const deviceErrors: AnswerCode[] = ['invalid-input', 'unauthenticated', 'device-not-found']

/** The refusals of a network call through the device's send queue (sends, groups, read receipts); `unreachable`: the network cannot be reached from this server (the memory transport's simulator server away). */
export const queueErrors: AnswerCode[] = [
  'not-connected',
  'send-queue-full',
  'rate-limited',
  'send-queue-timeout',
  'send-stalled',
  'timeout',
  'unreachable',
  'failed',
]

/** The refusals of operations 8 to 16 (send now, or schedule with `agendamento` within the account's quota; `not-admin`: a group the device may not post to; `not-found`: a recipient the network does not know). */
export const sendErrors: AnswerCode[] = [...deviceErrors, ...queueErrors, 'invalid', 'not-admin', 'not-found', 'quota-exceeded']

/** The refusals of a send that targets an earlier message (reaction, delete, read receipt: the network's `not-found` is `message-not-found`). */
export const targetErrors: AnswerCode[] = [...sendErrors.filter(code => code !== 'not-found'), 'message-not-found']

/** The refusals of fetching a media URL (or a carousel card image). */
export const mediaErrors: AnswerCode[] = ['media-refused', 'media-bad-status', 'media-timeout', 'media-unreachable', 'media-too-large', 'media-budget-exceeded']

/** The code anything thrown inside the gateway is answered by (`internal` for the unexpected). */
export function answerCodeOf(err: unknown): AnswerCode {
  if (err instanceof GatewayError || err instanceof TransportError) return err.code
  if (err instanceof StorageUnavailableError) return 'storage-unavailable'
  return 'internal'
}

/** The answer to `err` (the operation's own for its code, else the table's), with a GatewayError's detail and retry time. */
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
