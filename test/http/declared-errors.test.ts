import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { internalsOf } from '../../src/internals.ts'
import { TransportError } from '../../src/ports/transport.ts'
import { startGateway } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'
import { declarationChecker, networkCallRequests } from '../helpers/openapi.ts'
import { openSocket } from '../helpers/raw-http.ts'
import { operationTable } from '../../src/operations/table.ts'
import { operationsOf } from '../../src/operations/operation.ts'

/**
 * The network's refusals each operation answers, each declared by that operation: its exact body
 * an example of the OpenAPI document's response for its path and status, naming the operation
 * (the error list of the operation table, which docs/api.md words). A schema check alone passes any
 * `{status, message}` under a status the path lists (openapi-error-answers.test.ts).
 */

test("the network's 400 refusal of a group operation is an answer the operation declares (docs/api.md: the group operations too)", async () => {
  const t = await startGateway()
  try {
    const declared = declarationChecker((await request(`${t.url}/openapi.json`)).body)
    const { authkey } = await t.register()
    await t.linkedDevice(authkey, 'loja', '5511999990001')
    // As the Baileys transport refuses a subject or participant list it cannot send.
    internalsOf(t.gateway).transport.groupCreate = async () => {
      throw new TransportError('invalid', 'a group needs a subject')
    }
    const answer = await t.post('/api/groups', { authkey, appkey: 'loja', message: 'Equipe', usuarios: '5511988880002', criarGrupo: 'true' })
    assert.equal(answer.body, { status: 400, message: 'Mensagem recusada pela rede.' })
    assert.equal(declared('/api/groups', 'createGroup', answer.status, answer.body), [])
  } finally {
    await t.stop()
  }
})

test("the network's 400 refusal of the OTP send (a text, as operation 8's) is an answer sendOtp declares", async () => {
  const t = await startGateway()
  try {
    const declared = declarationChecker((await request(`${t.url}/openapi.json`)).body)
    const { authkey } = await t.register()
    await t.linkedDevice(authkey, 'loja', '5511999990001')
    // As the Baileys transport refuses a message the server answers `bad-request` to.
    internalsOf(t.gateway).transport.send = async () => {
      throw new TransportError('invalid', 'bad-request')
    }
    const keys = { authkey, appkey: 'loja', to: '5511988880002' }
    for (const [body, operation] of [
      [{ ...keys, message: 'oi' }, 'sendText'],
      [{ ...keys, enviarOTP: 'true' }, 'sendOtp'],
    ] as const) {
      const answer = await t.post('/api/create-message', body)
      assert.equal(answer.body, { status: 400, message: 'Mensagem recusada pela rede.' }, operation)
      assert.equal(declared('/api/create-message', operation, answer.status, answer.body), [])
    }
  } finally {
    await t.stop()
  }
})

test('a network call the transport cannot make, the network unreachable (the simulator server away: docs/simulator.md), is a 503 the sends, read receipts, OTP send and group operations declare', async () => {
  const t = await startGateway()
  try {
    const declared = declarationChecker((await request(`${t.url}/openapi.json`)).body)
    const { authkey } = await t.register()
    await t.linkedDevice(authkey, 'loja', '5511999990001')
    // As the memory transport joined to a simulator server (simUrl) throws when that server cannot be reached.
    const transport = internalsOf(t.gateway).transport
    const away = async (): Promise<never> => {
      throw new TransportError('unreachable', 'the simulator cannot be reached: connect ECONNREFUSED')
    }
    Object.assign(transport, { send: away, markRead: away, groupInfo: away, groupCreate: away, groupJoin: away })
    const keys = { authkey, appkey: 'loja' }
    const failures: string[] = []
    for (const [path, body, operation] of networkCallRequests(keys)) {
      const answer = await t.post(path, body)
      assert.equal(answer.body, { status: 503, message: 'O WhatsApp não pode ser acessado a partir deste servidor. Tente novamente mais tarde.' }, operation)
      assert.is(answer.headers.get('retry-after'), '30', operation)
      failures.push(...declared(path, operation, answer.status, answer.body))
    }
    assert.equal(failures, [])
  } finally {
    await t.stop()
  }
})

test("a link the network refuses is answered as operation 3 declares: its 400 is the spec's `Parâmetros inválidos.`, any other refusal the network's failure (502)", async () => {
  const t = await startGateway()
  try {
    const declared = declarationChecker((await request(`${t.url}/openapi.json`)).body)
    const { authkey } = await t.register()
    const transport = internalsOf(t.gateway).transport
    const failures: string[] = []
    // As the Baileys transport fails a link when WhatsApp refuses the pairing code (its error mapped by toTransportError).
    for (const [code, status, message] of [
      ['invalid', 400, 'Parâmetros inválidos.'],
      ['not-found', 502, 'Falha na rede de mensagens.'],
      ['not-admin', 502, 'Falha na rede de mensagens.'],
      ['not-connected', 502, 'Falha na rede de mensagens.'],
    ] as const) {
      transport.link = async () => {
        throw new TransportError(code, 'pairing code: refused')
      }
      const answer = await t.post('/api/v2/qrcode', { authkey, setAppkey: `loja-${code}`, phone: '+55 11 99999-0001' })
      assert.equal(answer.body, { status, message }, code)
      failures.push(...declared('/api/v2/qrcode', 'generateQrCode', answer.status, answer.body))
    }
    assert.equal(failures, [])
  } finally {
    await t.stop()
  }
})

test('a large body refused before it is read because the media budget is busy (429, docs/limits.md) is declared by every operation of every path, as the other refusals of an unread body', async () => {
  const t = await startGateway({ mediaBytesInFlight: '1mb', rateLimit: false })
  // A body of 900 KB declared and never sent holds that much of the budget until its time-out.
  const holder = await openSocket(t.url)
  try {
    const document = (await request(`${t.url}/openapi.json`)).body
    const declared = declarationChecker(document)
    holder.write('POST /api/create-message HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 900000\r\n\r\n{"file":"')
    await new Promise(resolve => setTimeout(resolve, 100)) // the holder's headers read
    const failures: string[] = []
    for (const entry of operationTable) {
      const answer = await t.post(entry.path, { authkey: 'k', appkey: 'loja', message: 'x'.repeat(200_000) })
      assert.equal(
        [answer.status, answer.body],
        [429, { status: 429, message: 'Servidor ocupado com outros arquivos. Tente novamente em instantes.' }],
        entry.path,
      )
      for (const { name } of operationsOf(entry)) failures.push(...declared(entry.path, name, answer.status, answer.body))
    }
    assert.equal(failures, [])
  } finally {
    holder.destroy()
    await t.stop()
  }
})

test.run()
