import assert from 'node:assert/strict'
import { suite } from 'uvu'
import type { Logger } from '../../src/logger.ts'
import { MemoryNetwork, memoryTransport } from '../../adapters/transport-memory/index.ts'
import { inProcessCluster } from '../helpers/cluster-in-process.ts'
import { startGateway, waitFor } from '../helpers/gateway.ts'
import { post, request, type Answer } from '../helpers/http.ts'
import { startReceiver } from '../helpers/receiver.ts'
import { PNG } from '../helpers/samples.ts'

/**
 * Every log call (all levels, child bindings included, errors with their message, stack, cause and
 * own fields), every /metrics line and every error answer of a whole flow through the HTTP API, and
 * none of the secrets of that flow in any of them.
 */
const test = suite('secrets reach neither the logs, nor /metrics, nor error answers')

const FRIEND = '5511988880002'
/** The secret inProcessCluster gives its members. */
const CLUSTER_SECRET = 'a cluster secret of enough length'

/** A logger recording every call's arguments as text (an Error: its message, stack, cause and own fields). */
function recordingLogger(): { logger: Logger; calls: string[] } {
  const calls: string[] = []
  const make = (bindings: Record<string, unknown>): Logger => {
    const record =
      (level: string) =>
      (obj: object | string, msg?: string): void =>
        void calls.push(`${level} ${text({ bindings, obj, msg })}`)
    return { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error'), child: more => make({ ...bindings, ...more }) }
  }
  return { logger: make({}), calls }
}

function text(value: unknown): string {
  const seen = new WeakSet()
  return JSON.stringify(value, (_key, item) => {
    if (typeof item === 'bigint') return String(item)
    if (item && typeof item === 'object') {
      if (seen.has(item)) return '[circular]'
      seen.add(item)
      if (item instanceof Error) return { ...item, name: item.name, message: item.message, stack: item.stack, cause: (item as { cause?: unknown }).cause }
    }
    return item
  })
}

/** Whether `haystack` contains `secret` as a whole token (not inside a longer run of letters or digits). */
function contains(haystack: string, secret: string): boolean {
  const escaped = secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(`(?<![0-9A-Za-z])${escaped}(?![0-9A-Za-z])`).test(haystack)
}

function leaks(where: string, haystack: string, secrets: Record<string, string>): string[] {
  return Object.entries(secrets)
    .filter(([, secret]) => contains(haystack, secret))
    .map(([name]) => `${name} in ${where}`)
}

test('a whole flow, logged at debug with no redaction: no secret in a log call, a /metrics line or an error answer', async () => {
  const { logger, calls } = recordingLogger()
  const errors: Answer[] = []
  const keep = (answer: Answer) => (answer.status >= 400 || answer.body?.status >= 400 ? void errors.push(answer) : undefined, answer)
  const receiver = await startReceiver((_, index) => (index === 0 ? 500 : 200))
  const t = await startGateway({ logger, metrics: true, allowPrivateUrls: true, webhookRetryMs: [50], sendTimeoutMs: 300 })
  const api = async (path: string, body: Record<string, unknown>) => keep(await t.post(path, body))
  const secrets: Record<string, string> = {}
  let metrics = ''
  try {
    secrets.senha = 'senha-muito-secreta-456'
    const account = { auth: 'registrar', nome: 'Bia', email: 'bia-everywhere@example.com', senha: secrets.senha, telefone: '5511999990000', plano: '1' }
    const authkey = (secrets.authkey = (await api('/api/auth', account)).body.data.authkey)
    await api('/api/auth', account)
    await api('/api/auth', { ...account, email: 'outra@example.com', plano: 'plano-que-nao-existe' })
    const other = (secrets.otherAuthkey = (await api('/api/auth', { ...account, email: 'other-everywhere@example.com' })).body.data.authkey)
    secrets.wrongAuthkey = 'authkey-errada-mas-parecida-9876543210'
    await api('/api/developer', { authkey: secrets.wrongAuthkey, message: 'x', checkDispositivo: 'true' })
    // A device with a webhook (with basic credentials in its URL), its QR share link; a paired one.
    const hookUrl = receiver.url.replace('//', '//hookuser:hookpass-51c0@')
    secrets.hookPassword = 'hookpass-51c0'
    const withCredentials = await api('/api/developer', { authkey, message: 'com-senha', conecteQR: 'true', webhook: hookUrl })
    assert.ok(withCredentials.status >= 400, withCredentials.text)
    const added = await api('/api/developer', { authkey, message: 'recepcao', conecteQR: 'true', webhook: receiver.url })
    secrets.appkey = added.body.appkey
    secrets.webhookSecret = added.body.webhookSecret
    secrets.webhookKey = added.body.webhookSecret.slice('whsec_'.length)
    secrets.linkToken = added.body.link.split('/qr/')[1]
    keep(await request(added.body.link))
    keep(await request(`${added.body.link}/state`))
    keep(await request(`${added.body.link}x`))
    secrets.setAppkey = 'loja-secreta-b81d'
    const paired = await api('/api/v2/qrcode', { authkey, setAppkey: secrets.setAppkey, phone: '5511999990002' })
    secrets.pairingCode = paired.body.code
    await t.network.scan({ code: secrets.pairingCode }, '5511999990002')
    await t.network.scan({ deviceId: added.body.id }, '5511999990001')
    await t.network.settled()
    await waitFor(async () => (await api('/api/developer', { authkey, message: 'recepcao', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true)
    // Wrong keys: another account's authkey with this appkey, a wrong appkey, no authkey.
    const keys = { appkey: secrets.appkey, authkey }
    await api('/api/create-message', { appkey: secrets.appkey, authkey: other, to: FRIEND, message: 'x' })
    await api('/api/create-message', { appkey: secrets.appkey, authkey: secrets.wrongAuthkey, to: FRIEND, message: 'x' })
    secrets.wrongAppkey = 'appkey-errada-e0f1a2b3c4'
    await api('/api/create-message', { appkey: secrets.wrongAppkey, authkey, to: FRIEND, message: 'x' })
    await api('/api/create-message', { appkey: secrets.appkey, to: FRIEND, message: 'x' })
    await api('/api/developer', { authkey: other, message: 'recepcao', apagarDispositivo: 'true' })
    await api('/api/developer', { appkey: secrets.appkey, authkey: other, message: 'false', to: 'recepcao', GerenciarLinks: 'excluir' })
    // Sends, an OTP (wrong, then right, then again), failures and a stall.
    await api('/api/create-message', { ...keys, to: FRIEND, message: 'olá' })
    await api('/api/create-message', { ...keys, to: FRIEND, file: PNG.toString('base64'), descricao: 'foto' })
    await api('/api/create-message', { ...keys, to: FRIEND, enviarOTP: 'true' })
    secrets.otp = /\d{6}/.exec((t.network.inbox(FRIEND).at(-1) as { text: string }).text)![0]
    await api('/api/create-message', { ...keys, to: FRIEND, message: 'false', verificarOTP: secrets.otp === '000000' ? '111111' : '000000' })
    await api('/api/create-message', { ...keys, to: FRIEND, message: 'false', verificarOTP: secrets.otp })
    await api('/api/create-message', { ...keys, to: FRIEND, message: 'false', verificarOTP: secrets.otp })
    t.network.setFault(added.body.id, 'fail')
    await api('/api/create-message', { ...keys, to: FRIEND, message: 'falha' })
    t.network.setFault(added.body.id, 'hang')
    await api('/api/create-message', { ...keys, to: FRIEND, message: 'travada' })
    t.network.setFault(added.body.id, null)
    // Incoming text and media: a webhook delivery that fails once and is retried; the media link of the second.
    await t.network.sendFromPhone(FRIEND, '5511999990001', { type: 'text', text: 'oi' })
    await t.network.sendFromPhone(FRIEND, '5511999990001', { type: 'image', mimetype: 'image/png', base64: PNG.toString('base64') })
    const hooks = await receiver.waitForHooks(3)
    const mediaLink = /\/media\/([A-Za-z0-9_.-]+)/.exec(hooks.map(hook => hook.body).join('\n'))
    if (mediaLink) {
      secrets.mediaToken = mediaLink[1]
      keep(await request(`${t.url}/media/${secrets.mediaToken}x`))
    }
    // Bad bodies, a deleted share link, a deleted device.
    keep(await request(`${t.url}/api/create-message`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"authkey":"${authkey}",` }))
    await api('/api/create-message', { ...keys, to: 'nao-e-telefone', message: 'x' })
    await api('/api/developer', { appkey: secrets.appkey, authkey, message: 'false', to: 'recepcao', GerenciarLinks: 'excluir' })
    keep(await request(added.body.link))
    await api('/api/developer', { authkey, message: secrets.setAppkey, apagarDispositivo: 'true', apagarAppkey: 'true' })
    await api('/api/create-message', { appkey: secrets.setAppkey, authkey, to: FRIEND, message: 'x' })
    await waitFor(() => calls.some(call => call.includes('webhook attempt failed')), 5000, 'the failed delivery to be logged')
    metrics = (await request(`${t.url}/metrics`)).text
  } finally {
    await t.stop()
    await receiver.stop()
  }
  const log = calls.join('\n')
  if (process.env.SHOW_LOGS)
    console.log(
      log,
      metrics,
      errors.map(answer => answer.text),
      secrets,
    )
  for (const expected of ['invalid request', 'webhook attempt failed', 'device created', 'device deleted'])
    assert.ok(log.includes(expected), `logged: ${expected}`)
  assert.ok(metrics.includes('zapgate_http_requests_total'), 'the metrics were scraped')
  assert.ok(errors.length >= 10, `error answers were kept: ${errors.length}`)
  for (const [name, secret] of Object.entries(secrets)) assert.ok(secret && secret.length >= 6, `${name} was captured`)
  const found = [
    ...leaks('the logs', log, secrets),
    ...leaks('/metrics', metrics, secrets),
    ...errors.flatMap(answer => leaks(`an error answer (${answer.text})`, answer.text, secrets)),
  ]
  assert.deepEqual(found, [])
})

test('a request forwarded to the instance holding the device: no cluster secret, key or signature in the logs of either instance', async () => {
  const recorded = [recordingLogger(), recordingLogger()]
  const network = new MemoryNetwork()
  const members = await inProcessCluster(2, index => ({
    transport: memoryTransport({ network }),
    logger: recorded[index]!.logger,
    metrics: true,
  }))
  const secrets: Record<string, string> = { cluster: CLUSTER_SECRET }
  const errors: Answer[] = []
  let metrics = ''
  try {
    const [first] = members
    const authkey = (secrets.authkey = (
      await post(`${first!.url}/api/auth`, {
        auth: 'registrar',
        nome: 'C',
        email: 'c-everywhere@example.com',
        senha: 'senha-cluster-77',
        telefone: '5511999990000',
        plano: '1',
      })
    ).body.data.authkey)
    secrets.senha = 'senha-cluster-77'
    const added = await post(`${first!.url}/api/v2/qrcode`, { authkey, setAppkey: 'loja-cluster-3a9f' })
    secrets.appkey = added.body.appkey
    secrets.setAppkey = 'loja-cluster-3a9f'
    await network.scan({ deviceId: added.body.id }, '5511944443333')
    await waitFor(() => members.some(member => member.holds(added.body.id)))
    const other = members.find(member => !member.holds(added.body.id))!
    await waitFor(
      async () =>
        (await post(`${other.url}/api/developer`, { authkey, message: 'loja-cluster-3a9f', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true,
    )
    const sent = await post(`${other.url}/api/create-message`, { appkey: secrets.appkey, authkey, to: FRIEND, message: 'via outra instância' })
    assert.equal(sent.status, 200, sent.text)
    network.setFault(added.body.id, 'fail')
    errors.push(await post(`${other.url}/api/create-message`, { appkey: secrets.appkey, authkey, to: FRIEND, message: 'falha' }))
    network.setFault(added.body.id, null)
    errors.push(await post(`${other.url}/api/create-message`, { appkey: 'appkey-errada-cluster-1', authkey, to: FRIEND, message: 'x' }))
    metrics = (await request(`${other.url}/metrics`)).text + (await request(`${first!.url}/metrics`)).text
  } finally {
    for (const member of members) await member.stop()
  }
  const log = recorded.flatMap(r => r.calls).join('\n')
  if (process.env.SHOW_LOGS)
    console.log(
      log,
      errors.map(a => a.text),
    )
  assert.ok(metrics.includes('zapgate_forwarded_requests_total'), 'scraped')
  const found = [
    ...leaks('the logs', log, secrets),
    ...leaks('/metrics', metrics, secrets),
    ...errors.flatMap(answer => leaks(`an error answer (${answer.text})`, answer.text, secrets)),
  ]
  assert.deepEqual(found, [])
})

test.run()
