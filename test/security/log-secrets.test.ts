import assert from 'node:assert/strict'
import pino from 'pino'
import { suite } from 'uvu'
import { redactPaths } from '../../examples/env-config.ts'
import { startGateway, waitFor } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'
import { startReceiver } from '../helpers/receiver.ts'
import { PNG } from '../helpers/samples.ts'

const test = suite('secrets never reach the logs')

const FRIEND = '5511988880002'

/** A pino logger at debug writing its lines to an array (no redaction unless given). */
function capturingLogger(redact?: string[]) {
  const lines: string[] = []
  const logger = pino(
    { level: 'debug', ...(redact ? { redact: { paths: redact, censor: '[redacted]' } } : {}) },
    { write: (line: string) => void lines.push(line) },
  )
  return { logger, lines }
}

/** Whether `text` contains `secret` as a whole token (not inside a longer run of letters or digits). */
function contains(text: string, secret: string): boolean {
  const escaped = secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(`(?<![0-9A-Za-z])${escaped}(?![0-9A-Za-z])`).test(text)
}

test('a full flow logged at debug, without any redaction, holds none of the secrets: the gateway never logs them', async () => {
  const { logger, lines } = capturingLogger()
  const receiver = await startReceiver((_, index) => (index === 0 ? 500 : 200))
  const t = await startGateway({ logger, allowPrivateUrls: true, webhookRetryMs: [50], sendTimeoutMs: 300 })
  const secrets: Record<string, string> = {}
  try {
    // Registration, a taken e-mail, a wrong authkey.
    secrets.senha = 'senha-muito-secreta-123'
    const registered = await t.post('/api/auth', {
      auth: 'registrar',
      nome: 'Ana',
      email: 'ana-logs@example.com',
      senha: secrets.senha,
      telefone: '5511999990000',
      plano: '1',
    })
    const authkey = (secrets.authkey = registered.body.data.authkey)
    await t.post('/api/auth', { auth: 'registrar', nome: 'Ana', email: 'ana-logs@example.com', senha: secrets.senha, telefone: '5511999990000', plano: '1' })
    secrets.wrongAuthkey = 'authkey-errada-mas-parecida-0123456789'
    await t.post('/api/developer', { authkey: secrets.wrongAuthkey, message: 'x', checkDispositivo: 'true' })
    // A device with a random appkey and a webhook; its QR share link; status.
    const added = await t.post('/api/developer', { authkey, message: 'recepcao', conecteQR: 'true', webhook: receiver.url })
    secrets.appkey = added.body.appkey
    secrets.webhookSecret = added.body.webhookSecret
    secrets.webhookKey = added.body.webhookSecret.slice('whsec_'.length)
    secrets.linkToken = added.body.link.split('/qr/')[1]
    await request(added.body.link)
    await request(`${added.body.link}/state`)
    // A device linked by pairing code, whose appkey was chosen.
    secrets.setAppkey = 'loja-secreta-7f3a'
    const paired = await t.post('/api/v2/qrcode', { authkey, setAppkey: secrets.setAppkey, phone: '5511999990002' })
    secrets.pairingCode = paired.body.code
    await t.network.scan({ code: secrets.pairingCode }, '5511999990002')
    await t.network.scan({ deviceId: added.body.id }, '5511999990001')
    await t.network.settled()
    await t.post('/api/developer', { authkey, message: 'recepcao', checkDispositivo: 'true' })
    // Sends, an OTP sent and verified (wrong, then right), a network failure and a stall.
    const keys = { appkey: secrets.appkey, authkey }
    await t.post('/api/create-message', { ...keys, to: FRIEND, message: 'olá' })
    await t.post('/api/create-message', { ...keys, to: FRIEND, file: PNG.toString('base64'), descricao: 'foto' })
    await t.post('/api/create-message', { ...keys, to: FRIEND, enviarOTP: 'true' })
    secrets.otp = /\d{6}/.exec((t.network.inbox(FRIEND).at(-1) as { text: string }).text)![0]
    await t.post('/api/create-message', { ...keys, to: FRIEND, message: 'false', verificarOTP: secrets.otp === '000000' ? '111111' : '000000' })
    await t.post('/api/create-message', { ...keys, to: FRIEND, message: 'false', verificarOTP: secrets.otp })
    t.network.setFault(added.body.id, 'fail')
    await t.post('/api/create-message', { ...keys, to: FRIEND, message: 'falha' })
    t.network.setFault(added.body.id, 'hang')
    await t.post('/api/create-message', { ...keys, to: FRIEND, message: 'travada' })
    t.network.setFault(added.body.id, null)
    // Incoming traffic: a webhook delivery that fails once, then succeeds.
    await t.network.sendFromPhone(FRIEND, '5511999990001', { type: 'text', text: 'oi' })
    await receiver.waitForHooks(2)
    // Bad bodies, then deleting a device with its appkey.
    await request(`${t.url}/api/create-message`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"authkey":"${authkey}",` })
    await t.post('/api/create-message', { ...keys, to: 'nao-e-telefone', message: 'x' })
    await t.post('/api/developer', { authkey, message: secrets.setAppkey, apagarDispositivo: 'true', apagarAppkey: 'true' })
    await waitFor(() => lines.some(line => line.includes('webhook attempt failed')), 5000, 'the failed delivery to be logged')
  } finally {
    await t.stop()
    await receiver.stop()
  }
  const log = lines.join('')
  if (process.env.SHOW_LOGS) console.log(log, secrets)
  // The capture works: debug lines of failures and refusals are there.
  for (const expected of ['invalid request', 'webhook attempt failed', 'device created', 'device deleted'])
    assert.ok(log.includes(expected), `logged: ${expected}`)
  for (const [name, secret] of Object.entries(secrets)) {
    assert.ok(secret && secret.length >= 6, `${name} was captured`)
    assert.ok(!contains(log, secret), `${name} appears in the logs`)
  }
})

test('webhook and media URLs are logged without their query string, which may carry a token (a failed delivery, a 410, a failed download)', async () => {
  const { logger, lines } = capturingLogger()
  const receiver = await startReceiver((_, index) => (index === 0 ? 500 : 410))
  const t = await startGateway({ logger, allowPrivateUrls: true, webhookRetryMs: [50] })
  const [hookToken, mediaToken] = ['hooktoken8f2a61', 'mediatoken3c9d07']
  try {
    const { authkey } = await t.register()
    const device = await t.linkedDevice(authkey, 'loja', '5511999990001', { webhook: `${receiver.url}?token=${hookToken}` })
    await t.network.sendFromPhone(FRIEND, '5511999990001', { type: 'text', text: 'oi' })
    await waitFor(() => lines.some(line => line.includes('410 Gone')), 5000, 'the 410 to be logged')
    const media = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: FRIEND, file: `${receiver.url}/foto.png?sig=${mediaToken}` })
    assert.equal(media.status, 400, media.text)
  } finally {
    await t.stop()
    await receiver.stop()
  }
  const log = lines.join('')
  if (process.env.SHOW_LOGS) console.log(log)
  assert.ok(log.includes('webhook attempt failed') && log.includes(new URL(receiver.url).host), 'the failures are logged, with the receiver')
  assert.ok(!contains(log, hookToken), 'the token of the webhook URL appears in the logs')
  assert.ok(!contains(log, mediaToken), 'the token of the media URL appears in the logs')
})

test('redactPaths censors the secret fields of bodies a host logs, up to three levels deep, and keeps err.code', () => {
  const { logger, lines } = capturingLogger(redactPaths)
  logger.info({ authkey: 'k0', senha: 's0', req: { body: { authkey: 'k1', senha: 's1', appkey: 'a1', setAppkey: 'a2', verificarOTP: '482913' } } }, 'request')
  logger.info(
    { res: { body: { data: { authkey: 'k2' }, webhookSecret: 'whsec_x', qrcode: 'data:image/png;base64,AAA', link: 'https://gw/qr/tok', code: '48219375' } } },
    'response',
  )
  logger.info({ body: { code: '48219375' }, err: { code: 'ECONNREFUSED', message: 'down' } }, 'error')
  const log = lines.join('')
  for (const secret of ['k0', 's0', 'k1', 's1', 'a1', 'a2', '482913', 'k2', 'whsec_x', 'data:image/png', 'https://gw/qr/tok', '48219375']) {
    assert.ok(!log.includes(`"${secret}`), `${secret} is redacted`)
  }
  assert.ok(log.includes('ECONNREFUSED'), 'err.code is kept')
  assert.equal(log.match(/\[redacted\]/g)?.length, 13)
})

test('a malformed JSON body is logged without its text: the parser names the bytes around the fault, a password among them', async () => {
  const { logger, lines } = capturingLogger()
  const t = await startGateway({ logger })
  const secret = 'segredo12'
  try {
    const body = `{"auth":"registrar","email":"a@example.com","senha":'${secret}',"nome":"Ana","telefone":"5511999990000","plano":"1"}`
    for (const type of ['application/json', 'application/json; charset=iso-8859-1']) {
      const answer = await request(`${t.url}/api/auth`, { method: 'POST', headers: { 'content-type': type }, body })
      assert.deepEqual(answer.body, { status: 400, message: 'JSON inválido.' }, type)
    }
  } finally {
    await t.stop()
  }
  const log = lines.join('')
  assert.ok(log.includes('JSON inválido.'), 'the refusal is logged')
  assert.ok(!contains(log, secret), 'the password appears in the logs')
})

test.run()
