import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { baileysTransport, type BaileysTransportOptions } from '../../adapters/transport-baileys/index.ts'

const options = suite('Baileys transport: options are checked when the transport is created')

function refused(given: unknown, message: RegExp): void {
  try {
    baileysTransport(given as BaileysTransportOptions)
  } catch (error) {
    assert.instance(error, TypeError)
    assert.match((error as Error).message, message)
    return
  }
  assert.unreachable(`accepted ${JSON.stringify(given)}`)
}

options('an unknown or misspelt option is an error naming it (and the option meant), not a silently kept default', () => {
  refused({ sendTimeOutMs: 5_000 }, /^baileysTransport: unknown option "sendTimeOutMs" \(did you mean "sendTimeoutMs"\?\)$/)
  refused({ printQRInTerminal: true }, /unknown option "printQRInTerminal" \(did you mean "printQrInTerminal"\?\)/)
  refused({ proxyUrl: 'http://p:1' }, /unknown option "proxyUrl" \(did you mean "proxy"\?\)/)
  refused({ somethingElse: 1 }, /^baileysTransport: unknown option "somethingElse"$/)
  refused({ reconnect: { initalDelayMs: 10 } }, /option "reconnect" has an unknown key "initalDelayMs" \(did you mean "initialDelayMs"\?\)/)
  refused('fast', /the options must be an object/)
})

options('a value of the wrong type or range is an error naming the option', () => {
  refused({ sendTimeoutMs: '60000' }, /option "sendTimeoutMs" must be a positive number/)
  refused({ openTimeoutMs: 0 }, /option "openTimeoutMs" must be a positive number/)
  refused({ inlineMediaMaxBytes: -1 }, /option "inlineMediaMaxBytes" must be a number of bytes/)
  refused({ buttonsFallback: 'html' }, /option "buttonsFallback" must be one of "interactive", "text"/)
  refused({ baileysLogLevel: 'verbose' }, /option "baileysLogLevel" must be one of/)
  refused({ printQrInTerminal: 'yes' }, /option "printQrInTerminal" must be true, false or a stream/)
  refused({ browser: ['Ubuntu', 'Chrome'] }, /option "browser" must be \[os, browser, version\]/)
  refused({ socketFactory: {} }, /option "socketFactory" must be a function/)
  refused({ reconnect: { jitter: '0.2' } }, /option "reconnect.jitter" must be a number/)
  refused({ reconnect: { factor: 0.5 } }, /option "reconnect.factor" must be at least 1/)
  refused({ ffmpegPath: '' }, /option "ffmpegPath" must be a path or false/)
  refused({ checkReachability: 'on' }, /option "checkReachability" must be true or false/)
  refused({ quietSignalLogs: 'yes' }, /option "quietSignalLogs" must be true or false/)
})

options('proxies must be http(s) or socks URLs; the socket options the adapter sets are not overridable', () => {
  refused({ proxy: 'ftp://proxy.example:21' }, /option "proxy" must be an http:\/\/, https:\/\/, socks4:\/\/ or socks5:\/\/ URL/)
  refused({ proxy: 'proxy.example:3128' }, /option "proxy" must be/)
  refused({ proxy: 3128 }, /option "proxy" must be a proxy URL or a function/)
  refused({ socketConfig: { auth: {} } }, /option "socketConfig" may not set "auth": the adapter sets it/)
  refused({ socketConfig: { shouldIgnoreJid: () => false } }, /may not set "shouldIgnoreJid"/)
  refused({ proxy: 'http://p.example:1', socketConfig: { agent: {} } }, /either "proxy" or socketConfig.agent\/fetchAgent, not both/)
})

options('every documented option is accepted, undefined values included', () => {
  const transport = baileysTransport({
    socketFactory: undefined,
    resolveVersion: async () => undefined,
    downloadMedia: async () => Buffer.alloc(0),
    printQrInTerminal: { write: () => true },
    inlineMediaMaxBytes: 0,
    buttonsFallback: 'text',
    sendTimeoutMs: 1_000,
    linkTimeoutMs: 1_000,
    openTimeoutMs: 1_000,
    reconnect: { initialDelayMs: 1, maxDelayMs: 2, factor: 1, jitter: 0, stableAfterMs: 3 },
    baileysLogLevel: 'silent',
    messageTtlMs: 1_000,
    browser: ['Ubuntu', 'Chrome', '22.04'],
    proxy: id => (id === 'x' ? 'socks5://user:pw@127.0.0.1:1080' : undefined),
    ffmpegPath: false,
    checkReachability: false,
    quietSignalLogs: false,
    socketConfig: { connectTimeoutMs: 5_000 },
  })
  assert.type(transport.link, 'function')
  assert.type(baileysTransport({ proxy: 'https://user:pw@proxy.example:8443' }).send, 'function')
  assert.type(baileysTransport().send, 'function')
})

options.run()
