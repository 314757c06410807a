import { test } from 'uvu'
import * as assert from 'uvu/assert'
import pino from 'pino'
import type { WebhookSender } from '../../src/index.ts'
import { startGateway } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'
import { declarationChecker } from '../helpers/openapi.ts'

/**
 * A host's webhook sender whose URL policy (`accepts`) throws on a URL (a bug of the host's, e.g. a
 * parser that fails on an IPv6 literal): operations 3 and 4 refuse that webhook as one the policy does
 * not take (docs/api.md), an answer each declares, never a 500; the error is logged for the host, and
 * no device is made.
 */
test("a webhook sender's accepts that throws: operations 3 and 4 refuse the URL as declared, log the error, and make no device", async () => {
  const lines: string[] = []
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) })
  const webhooks: WebhookSender = {
    send: async () => ({ status: 200 }),
    accepts: url => {
      if (url.includes('[')) throw new TypeError('policy: cannot read the host of an IPv6 literal')
      return true
    },
  }
  const t = await startGateway({ webhooks, logger })
  try {
    const declared = declarationChecker((await request(`${t.url}/openapi.json`)).body)
    const { authkey } = await t.register()
    const webhook = 'https://[2001:db8::1]/hook'
    const qr = await t.post('/api/v2/qrcode', { authkey, setAppkey: 'loja', webhook })
    assert.equal([qr.status, qr.body], [400, { status: 400, message: 'Parâmetros inválidos.' }])
    assert.equal(declared('/api/v2/qrcode', 'generateQrCode', qr.status, qr.body), [])
    const add = await t.post('/api/developer', { authkey, message: 'recepcao', conecteQR: 'true', webhook })
    assert.equal([add.status, add.body], [401, { status: 401, message: 'validation.required' }])
    assert.equal(declared('/api/developer', 'addDevice', add.status, add.body), [])
    // Logged at error level, for the host to see its policy failing (not only at debug, as a refusal).
    const errors = lines.map(line => JSON.parse(line)).filter(entry => entry.level >= 50 && JSON.stringify(entry).includes('IPv6 literal'))
    assert.is(errors.length, 2, lines.join('\n'))
    // The refused requests made no device.
    for (const name of ['loja', 'recepcao']) {
      const status = await t.post('/api/developer', { authkey, message: name, checkDispositivo: 'true' })
      assert.is(status.status, 404, name)
    }
    // A URL the policy takes still works.
    assert.is((await t.post('/api/v2/qrcode', { authkey, setAppkey: 'loja', webhook: 'https://hooks.example.com/zap' })).status, 200)
  } finally {
    await t.stop()
  }
})

test("a JavaScript sender's async accepts (a promise): the URL is refused and the error logged, its rejection handled, never taken as true", async () => {
  const lines: string[] = []
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) })
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => void unhandled.push(reason)
  process.on('unhandledRejection', onUnhandled)
  const webhooks = {
    send: async () => ({ status: 200 }),
    // As a JavaScript host might write it: an async policy where the port asks for a boolean.
    accepts: async (url: string) => {
      if (url.includes('internal')) throw new Error('policy: internal receivers refused')
      return false
    },
  } as unknown as WebhookSender
  const t = await startGateway({ webhooks, logger })
  try {
    const { authkey } = await t.register()
    for (const webhook of ['https://hooks.example.com/refused-later', 'https://internal.example.com/hook']) {
      const qr = await t.post('/api/v2/qrcode', { authkey, setAppkey: 'loja', webhook })
      assert.equal([qr.status, qr.body], [400, { status: 400, message: 'Parâmetros inválidos.' }], webhook)
    }
    await new Promise(resolve => setTimeout(resolve, 50))
    assert.equal(unhandled, [])
    const errors = lines.map(line => JSON.parse(line)).filter(entry => entry.level >= 50 && /accepts answered a promise/.test(entry.msg))
    assert.is(errors.length, 2, lines.join('\n'))
    assert.is((await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })).status, 404)
  } finally {
    process.off('unhandledRejection', onUnhandled)
    await t.stop()
  }
})

test.run()
