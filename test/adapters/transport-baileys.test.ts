import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, readFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { baileysTransport } from '../../adapters/transport-baileys/index.ts'
import { brazilianAlternative, normalizeJid, parseAddress, parseInviteCode, phoneOf } from '../../adapters/transport-baileys/jid.ts'
import { backoffDelay, closeAction, ConnectionProblem, describeClose, statusCodeOf } from '../../adapters/transport-baileys/policy.ts'
import { parseVersion, VersionSource } from '../../adapters/transport-baileys/version.ts'
import { baileysLogger } from '../../adapters/transport-baileys/logger.ts'
import { printQr } from '../../adapters/transport-baileys/qr-terminal.ts'
import { toTransportError } from '../../adapters/transport-baileys/errors.ts'
import { BoundedMap } from '../../src/store/bounded-map.ts'
import { Boom } from '@hapi/boom'
import { getCodeFromWSError } from '@whiskeysockets/baileys'
import { setupBaileys } from '../helpers/baileys-setup.ts'
import { readTerminalQr } from '../helpers/terminal-qr.ts'
import { NODE_TS } from '../helpers/node-ts.ts'

const module = suite('Baileys transport: module')
const adapterDir = fileURLToPath(new URL('../../adapters/transport-baileys/', import.meta.url))

module('baileysTransport() builds a Transport with every port method (and downloadMedia)', () => {
  const transport = baileysTransport()
  for (const method of [
    'start',
    'connect',
    'link',
    'status',
    'logout',
    'disconnect',
    'send',
    'markRead',
    'groupInfo',
    'groupCreate',
    'groupJoin',
    'stop',
    'downloadMedia',
  ]) {
    assert.type((transport as unknown as Record<string, unknown>)[method], 'function', method)
  }
})

module('Baileys is only imported lazily: no adapter file (in any of its folders) has a value import of it', () => {
  const files = readdirSync(adapterDir, { recursive: true, encoding: 'utf8' }).filter(f => f.endsWith('.ts'))
  assert.ok(
    files.some(f => f.startsWith('session/')),
    'the session folder is read too',
  )
  for (const file of files) {
    const source = readFileSync(adapterDir + file, 'utf8')
    const imports = source.match(/^import [^\n]*from '@whiskeysockets\/baileys[^']*'/gm) ?? []
    for (const line of imports) assert.ok(line.startsWith('import type '), `${file}: ${line}`)
  }
})

module('importing the adapter and creating a transport does not load Baileys; first use does', () => {
  // A loader hook that refuses to load Baileys: creating the transport (which checks that Baileys can be
  // resolved, without loading it) must not trip it, using it must.
  const hook =
    'export async function load(url, c, next) { if (url.includes("/@whiskeysockets/baileys/")) throw new Error("BAILEYS_LOADED"); return next(url, c) }'
  const register = `import { register } from 'node:module'; register('data:text/javascript,${encodeURIComponent(hook)}')`
  const script = `
    const { baileysTransport } = await import('./adapters/transport-baileys/index.ts')
    const transport = baileysTransport({ printQrInTerminal: true })
    console.log('created')
    await transport.start({ storage: { get: async () => undefined }, logger: console, emit: async () => {} })
    await transport.link('dev', {}).catch(error => console.log(String(error.message)))`
  const root = fileURLToPath(new URL('../../', import.meta.url))
  const result = spawnSync(
    process.execPath,
    [...NODE_TS, '--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', script],
    {
      cwd: root,
      encoding: 'utf8',
    },
  )
  assert.is(result.status, 0, result.stderr)
  assert.equal(result.stdout.trim().split('\n'), ['created', 'BAILEYS_LOADED'])
})

module('without Baileys installed, creating the transport or a gateway on the default transport fails naming the package to install', () => {
  // A resolve hook that finds no Baileys, as in a host that did not install the optional package.
  const hook =
    'export async function resolve(s, c, next) { if (s.startsWith("@whiskeysockets/baileys")) throw Object.assign(new Error("Cannot find package @whiskeysockets/baileys"), { code: "ERR_MODULE_NOT_FOUND" }); return next(s, c) }'
  const register = `import { register } from 'node:module'; register('data:text/javascript,${encodeURIComponent(hook)}')`
  const script = `
    const { baileysTransport } = await import('./adapters/transport-baileys/index.ts')
    const { createGateway } = await import('./src/index.ts')
    try { baileysTransport() } catch (error) { console.log(error.message) }
    await createGateway().catch(error => console.log(error.message))`
  const root = fileURLToPath(new URL('../../', import.meta.url))
  const result = spawnSync(
    process.execPath,
    [...NODE_TS, '--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', script],
    {
      cwd: root,
      encoding: 'utf8',
    },
  )
  assert.is(result.status, 0, result.stderr)
  assert.equal(result.stdout.trim().split('\n'), [
    'The Baileys transport needs the optional package @whiskeysockets/baileys, which is not installed: run npm install @whiskeysockets/baileys@7.0.0-rc14',
    'The default transport (WhatsApp through Baileys; pass `transport` to use another) needs the optional package @whiskeysockets/baileys, which is not installed: run npm install @whiskeysockets/baileys@7.0.0-rc14',
  ])
})

module('status() of an unknown device is closed, and never throws', async () => {
  const s = await setupBaileys()
  assert.equal(await s.transport.status('nobody'), { state: 'closed', connected: false })
  assert.equal(await baileysTransport().status('not-started'), { state: 'closed', connected: false })
  await s.transport.stop()
})

module('methods before start() fail clearly', async () => {
  try {
    await baileysTransport().connect('dev')
    assert.unreachable()
  } catch (error) {
    assert.match((error as Error).message, /not been started/)
  }
})

module('parseAddress: JIDs pass through (device dropped, c.us mapped), numbers are digits', () => {
  assert.equal(parseAddress('+55 (11) 99999-0000'), { kind: 'phone', phone: '5511999990000' })
  assert.equal(parseAddress('5511999990000:12@s.whatsapp.net'), { kind: 'jid', jid: '5511999990000@s.whatsapp.net' })
  assert.equal(parseAddress('5511999990000@c.us'), { kind: 'jid', jid: '5511999990000@s.whatsapp.net' })
  assert.equal(parseAddress('123456789@lid'), { kind: 'jid', jid: '123456789@lid' })
  assert.equal(parseAddress('120363000000000001@g.us'), { kind: 'jid', jid: '120363000000000001@g.us' })
  assert.equal(parseAddress('5511999990000-1600000000@g.us'), { kind: 'jid', jid: '5511999990000-1600000000@g.us' })
  for (const bad of ['', 'abc', '12', 'x@newsletter', 'status@broadcast', 'abc@g.us']) assert.is(parseAddress(bad), undefined, bad)
})

module('Brazilian ninth digit alternatives', () => {
  assert.is(brazilianAlternative('5511987654321'), '551187654321')
  assert.is(brazilianAlternative('551187654321'), '5511987654321')
  assert.is(brazilianAlternative('551133334444'), undefined, 'landline')
  assert.is(brazilianAlternative('15551234567'), undefined, 'not Brazil')
})

module('invite links and codes', () => {
  assert.is(parseInviteCode('https://chat.whatsapp.com/AbC123xyz?mode=ems_copy_t'), 'AbC123xyz')
  assert.is(parseInviteCode('http://chat.whatsapp.com/invite/AbC123xyz'), 'AbC123xyz')
  assert.is(parseInviteCode('AbC123xyz'), 'AbC123xyz')
  assert.is(parseInviteCode('https://evil.example/AbC123xyz'), undefined)
  assert.is(parseInviteCode('a b'), undefined)
})

module('jid helpers', () => {
  assert.is(phoneOf('5511999990000:3@s.whatsapp.net'), '5511999990000')
  assert.is(phoneOf('123@lid'), undefined)
  assert.is(normalizeJid('123:4@lid'), '123@lid')
})

module('closeAction: the policy table, read from the errors Baileys closes with', () => {
  const boom = (message: string, statusCode: number, data?: object) => new Boom(message, { statusCode, ...(data ? { data } : {}) })
  const wsError = (code: string, message: string) => Object.assign(new Error(message), { code })
  const unreachable = (error: Error) => boom(`WebSocket Error (${error.message})`, getCodeFromWSError(error), error)
  const reconnect = { kind: 'reconnect', outdatedVersion: false, unreachable: false }
  assert.equal(closeAction(boom('Stream Errored (restart required)', 515), true), { kind: 'restart' })
  assert.equal(closeAction(boom('Intentional Logout', 401), true), { kind: 'logged-out' })
  assert.equal(closeAction(boom('Stream Errored (conflict)', 440), true), { kind: 'replaced' })
  for (const code of [402, 403, 406]) assert.is(closeAction(boom('Connection Failure', code), true).kind, 'stop')
  assert.equal(closeAction(boom('Connection was lost', 408), true), reconnect)
  assert.equal(closeAction(boom('QR refs attempts ended', 408), false), { kind: 'link-expired' })
  for (const [code, message] of [
    ['ENOTFOUND', 'getaddrinfo ENOTFOUND web.whatsapp.com'],
    ['ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:443'],
    ['ETIMEDOUT', 'Opening handshake has timed out'],
  ]) {
    const error = unreachable(wsError(code, message))
    assert.is(statusCodeOf(error), 408, 'Baileys gives every connect failure the code of an expired QR')
    for (const paired of [true, false])
      assert.equal(closeAction(error, paired), { kind: 'reconnect', outdatedVersion: false, unreachable: true }, `${code} paired ${paired}`)
    assert.is(describeClose(error), `WhatsApp cannot be reached from this server (${message})`)
  }
  assert.equal(closeAction(boom('Timed Out', 408), false), { kind: 'reconnect', outdatedVersion: false, unreachable: true })
  assert.equal(closeAction(new ConnectionProblem('WhatsApp refused the connection: HTTP 403'), true), {
    kind: 'reconnect',
    outdatedVersion: false,
    unreachable: true,
  })
  assert.equal(closeAction(boom('Connection Failure', 405), true), { kind: 'reconnect', outdatedVersion: true, unreachable: false })
  for (const code of [428, 500, 503]) assert.equal(closeAction(boom('x', code), true), reconnect)
  assert.equal(closeAction(new Error('socket hang up'), true), reconnect)
  assert.is(describeClose(boom('Stream Errored (conflict)', 440)), 'session replaced by another client (440)')
  assert.is(describeClose(boom('x', 599)), 'connection closed (599)')
  assert.is(describeClose(boom('QR refs attempts ended', 408)), 'the QR codes expired')
})

module('backoffDelay: exponential, capped, with jitter either way', () => {
  const options = { initialDelayMs: 1_000, maxDelayMs: 60_000, factor: 2, jitter: 0.2, stableAfterMs: 60_000 }
  assert.equal(
    [0, 1, 2, 3].map(a => backoffDelay(a, options, () => 0.5)),
    [1_000, 2_000, 4_000, 8_000],
  )
  assert.is(
    backoffDelay(20, options, () => 0.5),
    60_000,
  )
  assert.is(
    backoffDelay(0, options, () => 0),
    800,
  )
  assert.is(
    backoffDelay(0, options, () => 1),
    1_200,
  )
  assert.is(
    backoffDelay(100, options, () => 1),
    60_000,
    'jitter never exceeds the cap',
  )
})

module('version: WA_VERSION parsing and a resolver that runs once until invalidated', async () => {
  assert.equal(parseVersion('2.3000.1023456789'), [2, 3000, 1023456789])
  assert.equal(parseVersion('2,3000,1'), [2, 3000, 1])
  assert.is(parseVersion('2.3000'), undefined)
  assert.is(parseVersion(undefined), undefined)
  let calls = 0
  const source = new VersionSource(async () => {
    calls++
    if (calls === 1) throw new Error('offline')
    return [2, 3000, calls]
  })
  assert.is(await source.get(), undefined, 'a failing resolver means the bundled version')
  assert.is(await source.get(), undefined)
  source.invalidate()
  assert.equal(await source.get(), [2, 3000, 2])
  assert.is(calls, 2)
})

module('Baileys logs go to the gateway logger from the chosen level up', () => {
  const lines: string[] = []
  const sink = (level: string) => (obj: object | string, msg?: string) => lines.push(`${level}:${typeof obj === 'string' ? obj : msg}`)
  const logger = { debug: sink('debug'), info: sink('info'), warn: sink('warn'), error: sink('error') }
  const log = baileysLogger(logger, 'warn')
  log.trace({}, 't')
  log.debug({}, 'd')
  log.info({}, 'i')
  log.warn({}, 'w')
  log.child({ x: 1 }).error({}, 'e')
  assert.equal(lines, ['warn:w', 'error:e'])
  assert.is(log.level, 'warn')
  const silent = baileysLogger(logger, 'silent')
  silent.error('nothing')
  assert.is(lines.length, 2)
})

module('printQr draws a scannable block-character QR of the link payload under its label', async () => {
  const payload = '2@Hx0M4cPbTq9vLrAe1ZkWsYdNfUo3Gi,QmVsbG8gd29ybGQ=,aWRlbnRpdHkga2V5,YWR2IHNlY3JldA=='
  let text = ''
  await printQr(payload, { write: (t: string) => (text += t) }, 'label')
  assert.ok(text.startsWith('label\n'), 'the label comes first')
  assert.is(readTerminalQr(text.slice('label\n'.length)), payload, 'the drawing decodes to the payload')
})

module('toTransportError maps Baileys errors', () => {
  const code = (e: unknown) => toTransportError(e, 'x').code
  assert.is(code(new Boom('rate-overlimit', { data: 429 })), 'rate-limited')
  assert.is(code(new Boom('Connection Closed', { statusCode: 428 })), 'not-connected')
  assert.is(code(new Boom('Timed Out', { statusCode: 408 })), 'timeout')
  assert.is(code(new Boom('item-not-found', { data: 404 })), 'not-found')
  assert.is(code(new Boom('gone', { data: 410 })), 'not-found')
  assert.is(code(new Boom('not-authorized', { data: 401 })), 'not-admin')
  assert.is(code(new Boom('forbidden', { data: 403 })), 'not-admin')
  assert.is(code(new Boom('bad-request', { data: 400 })), 'invalid')
  assert.is(code(new Error('weird')), 'failed')
  assert.instance(toTransportError(new Error('weird'), 'x').cause, Error)
})

module('BoundedMap drops the oldest past its limit and expired entries on read', async () => {
  const map = new BoundedMap<string, number>(2, 20)
  map.set('a', 1)
  map.set('b', 2)
  map.set('c', 3)
  assert.is(map.get('a'), undefined)
  assert.is(map.get('c'), 3)
  map.set('d', 4, 1_000)
  await new Promise(resolve => setTimeout(resolve, 30))
  assert.is(map.get('c'), undefined)
  assert.is(map.get('d'), 4)
})

module.run()
