import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { openSocket } from '../helpers/raw-http.ts'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'
import { inProcessCluster } from '../helpers/cluster-in-process.ts'
import { memoryTransport } from '../../adapters/transport-memory/index.ts'

/**
 * A request body that does not arrive in time (issue 20.8): a slow client holds a connection and a
 * parser only for `bodyTimeoutMs`, then is answered 408 and its connection closed, whatever the body's type.
 */
const test = suite<{ t: TestGateway }>('bodyTimeoutMs: a body too slow to arrive is answered 408')
test.before(async ctx => {
  ctx.t = await startGateway({ bodyTimeoutMs: 300 })
})
test.after(async ctx => {
  await ctx.t.stop()
})

const bodies: [type: string, start: string, rest: string][] = [
  ['application/json', '{"auth":"regis', 'trar"}'],
  ['application/x-www-form-urlencoded', 'auth=regis', 'trar&nome=Ana'],
  ['application/json; charset=utf-8; x=1', '{"auth":', '"registrar"}'], // the general parser's path
  ['multipart/form-data; boundary=XyZ', '--XyZ\r\nContent-Disposition: form-data; name="auth"\r\n\r\nregis', 'trar\r\n--XyZ--\r\n'],
]

for (const [type, start, rest] of bodies) {
  test(`${type}: half a body, then nothing -> 408 body-timeout, connection closed`, async ({ t }) => {
    const socket = await openSocket(t.url)
    const closed = new Promise(resolve => socket.once('close', resolve))
    let answer = ''
    socket.on('data', chunk => (answer += chunk.toString('utf8')))
    socket.write(`POST /api/auth HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(start + rest)}\r\n\r\n${start}`)
    await closed
    assert.match(answer, /^HTTP\/1\.1 408 /)
    assert.match(answer, /\r\nConnection: close\r\n/i)
    assert.equal(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)), { status: 408, message: 'Tempo esgotado ao receber a requisição.' })
  })
}

test('a body that arrives whole in time is read as usual, over two packets', async ({ t }) => {
  const socket = await openSocket(t.url)
  const json = JSON.stringify({ auth: 'registrar', nome: 'Ana', email: 'ana.lenta@example.com', senha: 'senha-secreta', telefone: '5511912345678', plano: '1' })
  let answer = ''
  socket.on('data', chunk => (answer += chunk.toString('utf8')))
  socket.write(
    `POST /api/auth HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${json.length}\r\n\r\n${json.slice(0, 10)}`,
  )
  await new Promise(resolve => setTimeout(resolve, 20))
  socket.write(json.slice(10))
  await new Promise(resolve => socket.once('close', resolve))
  assert.match(answer, /^HTTP\/1\.1 200 /)
})

test('cluster mode: a body that claims to be forwarded (anyone can send the header) is held no longer: 408, connection closed', async () => {
  const [member] = await inProcessCluster(1, () => ({ transport: memoryTransport(), bodyTimeoutMs: 300 }))
  try {
    const socket = await openSocket(member!.url)
    const closed = new Promise(resolve => socket.once('close', resolve))
    let answer = ''
    socket.on('data', chunk => (answer += chunk.toString('utf8')))
    const head = 'POST /api/create-message HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nx-zapgate-forwarded-by: someone'
    socket.write(`${head}\r\nContent-Length: 100000\r\n\r\n{"authkey":"`)
    await Promise.race([closed, new Promise(resolve => setTimeout(resolve, 5_000))]) // before the fix: held until Node's own 300 s
    socket.destroy()
    assert.match(answer, /^HTTP\/1\.1 408 /)
    assert.match(answer, /\r\nConnection: close\r\n/i)
  } finally {
    await member!.stop()
  }
})

test('bodyTimeoutMs must be a positive number', async () => {
  await startGateway({ bodyTimeoutMs: 0 }).then(
    t => t.stop().then(() => assert.unreachable('should not start')),
    err => assert.match(String(err), /bodyTimeoutMs must be a positive number/),
  )
})

test.run()
