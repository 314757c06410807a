import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { post } from '../helpers/http.ts'
import { freePort, startStandalone } from '../helpers/standalone.ts'

const standalone = suite('npm start with the Baileys transport on a machine that cannot reach WhatsApp')

standalone('the log says within seconds that WhatsApp cannot be reached, and a QR request answers 503 instead of hanging', async () => {
  // GATEWAY_PROXY_URL points at a closed local port: every path to WhatsApp fails at once, offline.
  const proxy = `http://127.0.0.1:${await freePort()}`
  const server = await startStandalone({ GATEWAY_TRANSPORT: 'baileys', GATEWAY_STORE: 'memory://', GATEWAY_PROXY_URL: proxy })
  try {
    const started = Date.now()
    while (!server.output().includes('cannot be reached') && Date.now() - started < 20_000) await new Promise(resolve => setTimeout(resolve, 25))
    const line =
      server
        .output()
        .split('\n')
        .find(l => l.includes('cannot be reached')) ?? ''
    assert.ok(line, `no reachability line in:\n${server.output()}`)
    const entry = JSON.parse(line)
    assert.is(entry.level, 50, 'logged as an error')
    assert.match(entry.msg, /^WhatsApp cannot be reached from this server \(.*ECONNREFUSED.*\)/)
    assert.is(entry.proxy, proxy, 'the proxy it went through (no password to hide here)')
    const register = await post(`${server.url}/api/auth`, {
      auth: 'registrar',
      nome: 'Ana',
      email: 'ana@example.com',
      senha: 'senha-secreta',
      telefone: '+55 11 99999-0000',
      plano: '1',
    })
    assert.is(register.status, 200, register.text)
    const askedAt = Date.now()
    const qr = await post(`${server.url}/api/v2/qrcode`, { authkey: register.body.data.authkey, setAppkey: 'loja' })
    assert.is(qr.status, 503, qr.text)
    assert.is(qr.body.message, 'O WhatsApp não pode ser acessado a partir deste servidor. Tente novamente mais tarde.')
    // A request that waited for the link would wait for its 30 s time-out.
    assert.ok(Date.now() - askedAt < 20_000, `answered in ${Date.now() - askedAt} ms`)
  } finally {
    await server.kill()
  }
})

standalone.run()
