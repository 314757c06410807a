import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { startStandalone, type StandaloneServer } from '../helpers/standalone.ts'
import { request as httpRequest } from 'node:http'
import { request } from '../helpers/http.ts'

/**
 * The process-wide media budget (issue 20.6): 40 concurrent sends of 19 MB bodies (base64 media)
 * against a standalone gateway process. Past the budget a send is answered 429 with Retry-After;
 * none fails with 5xx, and the process's peak resident memory stays under the stated ceiling.
 * (Without the budget the same load took the process to about 1.6 GB.)
 */
const test = suite<{ server?: StandaloneServer }>('examples/standalone.ts: the media budget under 40 concurrent 19 MB sends')
test.after.each(async ctx => {
  await ctx.server?.kill('SIGKILL')
})

/** The ceiling this test holds the gateway process to (peak RSS, VmHWM), with the default 200 MB budget. */
const CEILING_MB = Number(process.env.MEDIA_BUDGET_TEST_CEILING_MB ?? 750)

test('every send answers 200 or 429 (Retry-After), none 5xx; peak RSS stays under the ceiling', async ctx => {
  // A 14.5 MB PDF as base64: a 19.3 MB body, one buffer for every request (the test's own memory stays small).
  const file = Buffer.alloc(Math.floor(14.5 * 1024 * 1024), 7)
  file.write('%PDF-1.4\n')
  const pdfBase64 = file.toString('base64')
  const server = (ctx.server = await startStandalone({
    GATEWAY_STORE: 'memory://',
    GATEWAY_RATE_LIMIT: 'off',
    GATEWAY_SIM_LOG_LIMIT: '10',
    ...(process.env.MEDIA_BUDGET_TEST_MB ? { GATEWAY_MEDIA_BUDGET_MB: process.env.MEDIA_BUDGET_TEST_MB } : {}),
  }))
  const authkey = (
    await postOnce(`${server.url}/api/auth`, {
      auth: 'registrar',
      nome: 'Ana',
      email: 'ana@example.com',
      senha: 'senha-secreta',
      telefone: '5511912345678',
      plano: '1',
    })
  ).body.data.authkey
  await postOnce(`${server.url}/api/v2/qrcode`, { authkey, setAppkey: 'midia' })
  assert.is((await postOnce(`${server.url}/_sim/scan`, { authkey, appkey: 'midia', phone: '5511900000009' })).status, 200)

  const body = Buffer.from(JSON.stringify({ appkey: 'midia', authkey, to: '5511970000009', file: pdfBase64, message: 'contrato.pdf' }))
  assert.ok(body.length > 19 * 1024 * 1024 && body.length < 20 * 1024 * 1024)
  const before = peakRssMb(server)
  const answers = await Promise.all(
    Array.from({ length: 40 }, () =>
      request(`${server.url}/api/create-message`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).catch((err: Error) => ({
        status: 0,
        body: String(err.cause ?? err),
        headers: new Headers(),
        text: '',
      })),
    ),
  )
  const peak = peakRssMb(server)
  const statuses = answers.map(a => a.status)
  const ok = statuses.filter(s => s === 200).length
  const refused = answers.filter(a => a.status === 429)
  console.log(`# 40 concurrent 19 MB sends: ${ok} answered 200, ${refused.length} 429; peak RSS ${peak} MB (${before} MB before), ceiling ${CEILING_MB} MB`)
  assert.ok(
    statuses.every(s => s === 200 || s === 429),
    `answers: ${statuses.join(',')}; failures: ${answers
      .filter(a => a.status === 0)
      .map(a => a.body)
      .join('; ')}`,
  )
  assert.ok(ok > 0, 'the budget lets sends through')
  for (const answer of refused) {
    assert.is(answer.body.message, 'Servidor ocupado com outros arquivos. Tente novamente em instantes.')
    assert.is(answer.headers.get('retry-after'), '5')
  }
  assert.ok(peak < CEILING_MB, `peak RSS ${peak} MB, over the ${CEILING_MB} MB ceiling`)
  const inbox = (await request(`${server.url}/_sim/inbox/5511970000009`)).body as unknown[]
  assert.is(inbox.length, ok, 'each send answered 200 reached the network')
  // Once they are answered the budget is free again: one more send goes through.
  assert.is((await request(`${server.url}/api/create-message`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status, 200)
})

/**
 * POST JSON on a connection of its own, closed after: the uploads then start on fresh connections.
 * With fetch's kept-alive connection from these setup calls, the first 19 MB upload went out on it and
 * failed with EPIPE in 3 of 4 loaded runs (the client's reuse of a connection, not the gateway's answer).
 */
function postOnce(url: string, body: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const data = JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) }
    const req = httpRequest(url, { method: 'POST', agent: false, headers }, res => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', chunk => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
    })
    req.on('error', reject)
    req.end(data)
  })
}

test.run()

/** The child's peak resident set size so far, in MB (Linux: VmHWM). */
function peakRssMb(server: StandaloneServer): number {
  const status = readFileSync(`/proc/${server.child.pid}/status`, 'utf8')
  return Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024)
}
