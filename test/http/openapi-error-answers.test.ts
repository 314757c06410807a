import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { internalsOf } from '../../src/internals.ts'
import type { MediaLinks } from '../../src/domain/media-links.ts'
import { TransportError } from '../../src/ports/transport.ts'
import { operationTable } from '../../src/operations/table.ts'
import { operationsOf, type PathEntry } from '../../src/operations/operation.ts'
import { startGateway } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'
import { answerChecker } from '../helpers/openapi.ts'
import { exchange, openSocket } from '../helpers/raw-http.ts'

/**
 * Error answers the gateway gives on its operation paths, each checked against the OpenAPI
 * document's response for that path and status (a client generated from the document, or a
 * validating proxy, refuses a status the document does not list).
 */

test('past the per-account request limit (on by default), every path that takes an authkey answers a documented 429', async () => {
  // An hour's window: fixed windows (offset drawn from the counter's key), so the requests all fall in one but once in thousands of runs.
  const t = await startGateway({ rateLimit: { perAccount: { points: 1, duration: 3600 } } })
  try {
    const fits = await answerChecker((await request(`${t.url}/openapi.json`)).body)
    const { authkey } = await t.register()
    await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' }) // the one request allowed
    const failures: string[] = []
    for (const { path } of operationTable.filter(entry => entry.path !== '/api/auth')) {
      const answer = await t.post(path, { authkey, appkey: 'loja', message: 'loja', checkDispositivo: 'true', to: '5511988880002' })
      assert.equal(answer.body, { status: 429, message: 'Muitas requisições. Tente novamente mais tarde.' }, path)
      assert.match(answer.headers.get('retry-after') ?? '', /^[1-9]\d*$/, path)
      failures.push(...fits(path, answer.status, answer.body, 'post', answer.headers))
    }
    assert.equal(failures, [])
  } finally {
    await t.stop()
  }
})

test('a body too slow to arrive is answered a documented 408 on every path', async () => {
  const t = await startGateway({ bodyTimeoutMs: 200 })
  try {
    const fits = await answerChecker((await request(`${t.url}/openapi.json`)).body)
    const failures: string[] = []
    for (const { path } of operationTable) {
      const socket = await openSocket(t.url)
      const closed = new Promise(resolve => socket.once('close', resolve))
      let answer = ''
      socket.on('data', chunk => (answer += chunk.toString('utf8')))
      socket.write(`POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"authkey":`)
      await closed
      const status = Number(/^HTTP\/1\.1 (\d+) /.exec(answer)?.[1])
      assert.is(status, 408, `${path}: ${answer}`)
      failures.push(...fits(path, status, JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))))
    }
    assert.equal(failures, [])
  } finally {
    await t.stop()
  }
})

test("the network's refusal for a group the device may not post to or manage (403 not-admin) is a documented answer", async () => {
  const t = await startGateway()
  try {
    const fits = await answerChecker((await request(`${t.url}/openapi.json`)).body)
    const { authkey } = await t.register()
    await t.linkedDevice(authkey, 'loja', '5511999990001')
    const transport = internalsOf(t.gateway).transport
    const refuse = async (): Promise<never> => {
      throw new TransportError('not-admin', 'forbidden')
    }
    transport.send = refuse
    transport.groupCreate = refuse
    const group = '120363000000000001@g.us'
    const failures: string[] = []
    for (const [path, body] of [
      ['/api/create-message', { authkey, appkey: 'loja', to: group, message: 'oi' }],
      ['/api/groups', { authkey, appkey: 'loja', message: 'Equipe', usuarios: '5511988880002', criarGrupo: 'true' }],
    ] as const) {
      const answer = await t.post(path, body)
      assert.equal(answer.body, { status: 403, message: 'O dispositivo não é administrador do grupo.' }, path)
      failures.push(...fits(path, answer.status, answer.body))
    }
    assert.equal(failures, [])
  } finally {
    await t.stop()
  }
})

test("the network's 404 for a recipient it does not know is a documented answer of the sends, the OTP send and group creation", async () => {
  const t = await startGateway()
  try {
    const document = (await request(`${t.url}/openapi.json`)).body
    const { authkey } = await t.register()
    await t.linkedDevice(authkey, 'loja', '5511999990001')
    // As the Baileys transport refuses a participant that is not on WhatsApp.
    internalsOf(t.gateway).transport.groupCreate = async () => {
      throw new TransportError('not-found', '5511988880002 is not on WhatsApp')
    }
    const keys = { authkey, appkey: 'loja' }
    for (const [path, body, operation] of [
      ['/api/create-message', { ...keys, to: '120363000000000001@g.us', message: 'oi' }, 'sendText'],
      ['/api/create-message', { ...keys, to: '12345678@lid', message: 'oi', buttons: [{ type: 'replyButton', displaytext: 'Sim' }] }, 'sendButtons'],
      ['/api/create-message', { ...keys, to: '12345678@lid', enviarOTP: 'true' }, 'sendOtp'],
      ['/api/groups', { ...keys, message: 'Equipe', usuarios: '5511988880002', criarGrupo: 'true' }, 'createGroup'],
    ] as const) {
      const answer = await t.post(path, body)
      assert.equal(answer.body, { status: 404, message: 'Destino não encontrado na rede.' }, operation)
      const examples = Object.values(document.paths[path].post.responses['404'].content['application/json'].examples) as { summary: string; value: unknown }[]
      assert.ok(
        examples.some(example => JSON.stringify(example.value) === JSON.stringify(answer.body) && example.summary.includes(operation)),
        `${operation} documents 404 ${answer.body.message}`,
      )
    }
  } finally {
    await t.stop()
  }
})

test("a media link whose download fails answers as the document says: the network's refusal 502, its silence 504, anything else 500", async () => {
  const t = await startGateway()
  try {
    const fits = await answerChecker((await request(`${t.url}/openapi.json`)).body)
    const { authkey } = await t.register()
    const device = await t.linkedDevice(authkey, 'midia', '5511944443338')
    const { transport, mediaLinks } = internalsOf(t.gateway) as { transport: { downloadMedia?: unknown }; mediaLinks: MediaLinks }
    const failures: string[] = []
    for (const [thrown, status, message] of [
      [new TransportError('failed', 'refused'), 502, 'Falha na rede de mensagens.'],
      [new TransportError('timeout', 'silent'), 504, 'A rede de mensagens não respondeu a tempo.'],
      [new Error('a bug'), 500, 'Erro interno.'],
    ] as const) {
      transport.downloadMedia = async () => Promise.reject(thrown)
      const answer = await request(`${t.url}/media/${await mediaLinks.sign({ deviceId: device.id, message: { id: '3EB0FAIL' } })}`)
      assert.equal([answer.status, answer.body], [status, { status, message }])
      failures.push(...fits('/media/{token}', answer.status, answer.body, 'get'))
    }
    assert.equal(failures, [])
  } finally {
    await t.stop()
  }
})

test("the service routes' refusals fit the document: an unknown share link's state and media link (404), /health while the gateway shuts down (503)", async () => {
  const t = await startGateway()
  const socket = await openSocket(t.url)
  try {
    const fits = await answerChecker((await request(`${t.url}/openapi.json`)).body)
    const revoked = await request(`${t.url}/qr/unknown-token/state`)
    assert.equal([revoked.status, revoked.body], [404, { status: 404, message: 'Link inválido, expirado ou excluído.' }])
    const failures = fits('/qr/{token}/state', revoked.status, revoked.body, 'get')
    const media = await request(`${t.url}/media/unknown-token`)
    assert.equal([media.status, media.body], [404, { status: 404, message: 'Mídia não encontrada ou link expirado.' }])
    failures.push(...fits('/media/{token}', media.status, media.body, 'get'))
    await exchange(socket, 'GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n') // a kept-alive connection
    await t.gateway.close()
    const draining = await exchange(socket, 'GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n')
    const status = Number(/^HTTP\/1\.1 (\d+) /.exec(draining)?.[1])
    assert.is(status, 503)
    failures.push(...fits('/health', status, JSON.parse(draining.slice(draining.indexOf('\r\n\r\n') + 4)), 'get'))
    assert.equal(failures, [])
  } finally {
    socket.destroy()
    await t.stop()
  }
})

/** The operations of `entry` whose documented examples of the answer's status lack the answer's exact body. */
function undocumentedFor(document: any, entry: PathEntry, answer: { status: number; body: any }): string[] {
  const examples = Object.values(document.paths[entry.path].post.responses[answer.status].content['application/json'].examples) as {
    summary: string
    value: unknown
  }[]
  return operationsOf(entry)
    .filter(({ name }) => !examples.some(example => JSON.stringify(example.value) === JSON.stringify(answer.body) && example.summary.includes(name)))
    .map(({ name }) => `${entry.path} ${name}: ${answer.status} ${JSON.stringify(answer.body)} not documented`)
}

test('a refusal given before the body chooses an operation (an unreadable body) is documented as it is for every operation of the path (verifyOtp: no valid: false)', async () => {
  const t = await startGateway()
  try {
    const document = (await request(`${t.url}/openapi.json`)).body
    const failures: string[] = []
    for (const entry of operationTable) {
      for (const [type, text] of [
        ['application/json', '{"authkey":'],
        ['text/plain', 'oi'],
      ]) {
        const answer = await request(t.url + entry.path, { method: 'POST', headers: { 'content-type': type }, body: text })
        assert.ok(answer.status === 400 || answer.status === 415, `${entry.path}: ${answer.text}`)
        failures.push(...undocumentedFor(document, entry, answer))
      }
    }
    assert.equal(failures, [])
  } finally {
    await t.stop()
  }
})

test('while the gateway shuts down, every path and GET route answers a documented 503 with its documented Retry-After (the operations of each path list it)', async () => {
  const t = await startGateway({ metrics: true })
  try {
    const document = (await request(`${t.url}/openapi.json`)).body
    const fits = await answerChecker(document)
    await t.gateway.close()
    const failures: string[] = []
    for (const entry of operationTable) {
      const answer = await t.post(entry.path, { authkey: 'k', appkey: 'loja', to: '5511988880002', message: 'oi' })
      assert.equal([answer.status, answer.headers.get('retry-after')], [503, '5'], entry.path)
      failures.push(...fits(entry.path, answer.status, answer.body, 'post', answer.headers))
      failures.push(...undocumentedFor(document, entry, answer))
    }
    for (const [path, item] of Object.entries(document.paths as Record<string, { get?: unknown }>)) {
      if (!item.get) continue
      const answer = await request(t.url + path.replace('{token}', 'a-token'))
      assert.equal([answer.status, answer.headers.get('retry-after')], [503, '5'], path)
      failures.push(...fits(path, answer.status, answer.body, 'get', answer.headers))
    }
    assert.equal(failures, [])
  } finally {
    await t.stop()
  }
})

test("a send scheduled past the account's schedule quota is refused with a 429 its operation documents", async () => {
  const t = await startGateway({ scheduleQuota: { maxPending: 1 } })
  try {
    const document = (await request(`${t.url}/openapi.json`)).body
    const { authkey } = await t.register()
    await t.addDevice(authkey, 'loja')
    const send = {
      authkey,
      appkey: 'loja',
      to: '5511988880002',
      message: 'oi',
      agendamento: new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10) + ' 10:00:00',
    }
    assert.is((await t.post('/api/create-message', send)).status, 200)
    const answer = await t.post('/api/create-message', send)
    assert.equal([answer.status, answer.headers.get('retry-after')], [429, '60'])
    assert.equal((await answerChecker(document))('/api/create-message', answer.status, answer.body, 'post', answer.headers), [])
    assert.match(answer.body.message, /^Limite da conta atingido\./)
    const examples = Object.values(document.paths['/api/create-message'].post.responses['429'].content['application/json'].examples) as {
      summary: string
      value: { message: string }
    }[]
    for (const name of ['sendText', 'sendMedia', 'reactToMessage', 'deleteMessage', 'markMessageRead'])
      assert.ok(
        examples.some(
          example => answer.body.message.startsWith(example.value.message) && example.value.message.startsWith('Limite') && example.summary.includes(name),
        ),
        `${name} documents 429 ${answer.body.message}`,
      )
  } finally {
    await t.stop()
  }
})

test.run()
