/**
 * Log redaction for hosts. The gateway itself never logs a request or response body (only paths,
 * ids and errors), but a host's request logger may: these are the fields that must never reach a
 * log in clear, and the pino `redact` paths that censor them up to three levels deep (`authkey`,
 * `body.authkey`, `req.body.authkey`, `res.body.data.authkey`).
 *
 *   pino({ redact: { paths: redactPaths, censor: '[redacted]' } })
 */

/** Wire and option fields that hold secrets: passwords, account and device keys, signing secrets, OTP and pairing codes, QR data and share links. */
export const secretFields = [
  'senha',
  'password',
  'authkey',
  'appkey',
  'setAppkey',
  'webhookSecret',
  'otpSecret',
  'verificarOTP',
  'qrcode',
  'qr',
  'link',
  'token',
  'authorization',
  'cookie',
] as const

/**
 * pino/fast-redact paths censoring every secret field at the top level and up to three levels
 * deep, plus `code` (the pairing code) where a body carries it. `err.code` (ECONNREFUSED...) is
 * left alone: it is what an operator needs.
 */
export const redactPaths: string[] = [
  ...secretFields.flatMap(field => [field, `*.${field}`, `*.*.${field}`, `*.*.*.${field}`]),
  ...['body.code', '*.body.code', 'data.code', 'response.code', 'res.code', 'answer.code'],
]
