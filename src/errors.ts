/**
 * The one error type of the gateway: thrown anywhere, rendered by the gateway's error middleware as
 * `{status, message, ...extra}`. `expose` makes Koa render it correctly even outside that middleware.
 */
export class GatewayError extends Error {
  readonly expose = true
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
    options?: { cause?: unknown; headers?: Record<string, string> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'GatewayError'
    this.headers = options?.headers
  }
  /** Extra response headers (e.g. Retry-After). */
  readonly headers?: Record<string, string>
}

/** The error messages of the API, as the spec spells them. */
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
  disconnected: 'Dispositivo desconectado.',
  alreadyConnected: 'Dispositivo já conectado.',
  rateLimited: 'Muitas requisições. Tente novamente mais tarde.',
  storageDown: 'Armazenamento indisponível. Tente novamente mais tarde.',
  transportTimeout: 'A rede de mensagens não respondeu a tempo.',
  transportFailed: 'Falha na rede de mensagens.',
  networkUnreachable: 'O WhatsApp não pode ser acessado a partir deste servidor. Tente novamente mais tarde.',
  internal: 'Erro interno.',
  // Messaging (send queue, media, message targets, schedules).
  sendQueueFull: 'Fila de envio do dispositivo cheia. Tente novamente mais tarde.',
  sendQueueTimeout: 'Tempo esgotado na fila de envio do dispositivo; a mensagem não foi enviada.',
  sendStalled: 'O envio não foi concluído a tempo; a mensagem pode não ter sido entregue.',
  shuttingDown: 'O gateway está sendo encerrado. Tente novamente em instantes.',
  messageNotFound: 'Mensagem não encontrada nesta conversa.',
  mediaRefused: 'URL do arquivo não permitida: use http(s) de um endereço público.',
  mediaTooLarge: 'Arquivo maior que o limite permitido.',
  mediaTimeout: 'Tempo esgotado ao baixar o arquivo da URL.',
  mediaUnreachable: 'Não foi possível baixar o arquivo da URL.',
  mediaBadStatus: 'O servidor do arquivo respondeu com erro.',
  cardImageInvalid: 'A imagem do cartão (image_url) não é uma imagem JPEG, PNG ou WebP.',
} as const
