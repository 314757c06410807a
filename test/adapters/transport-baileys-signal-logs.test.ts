import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Logger } from '../../src/logger.ts'
import { silentLogger } from '../../src/logger.ts'
import { baileysTransport, type BaileysTransport } from '../../adapters/transport-baileys/index.ts'
import { signalMessage } from '../../adapters/transport-baileys/signal-logs.ts'
import { startWaPeer, type WaPeer } from '../../adapters/wa-peer/index.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'
import { waitFor } from '../helpers/gateway.ts'

/**
 * libsignal (under Baileys) prints whole session records, chain keys and private keys included, with
 * console.info/warn/error. A real exchange through the local WhatsApp peer triggers those lines; with
 * quietSignalLogs (the default) none reaches stdout/stderr and they reach the transport's logger at
 * debug as text only, while the host's own console calls pass through unchanged.
 */
const logs = suite('Baileys transport: libsignal console output (session records) kept off stdout/stderr')

const SHOP = '5511999990001'
const FRIEND = '5511988880002'
/** What a printed session record shows: libsignal's messages, and the key fields of the record itself. */
const SECRETS = /Closing session|Opening session|Removing old closed session|chainKey|privKey|rootKey|ephemeralKeyPair/

interface Debug {
  obj: unknown
  msg?: string
}

/** Everything written to stdout and stderr while `run` runs (not printed). */
async function captureOutput<T>(run: () => Promise<T>): Promise<{ result: T; stdout: string; stderr: string }> {
  const out: string[] = []
  const err: string[] = []
  const [stdoutWrite, stderrWrite] = [process.stdout.write, process.stderr.write]
  process.stdout.write = ((chunk: unknown) => (out.push(String(chunk)), true)) as typeof process.stdout.write
  process.stderr.write = ((chunk: unknown) => (err.push(String(chunk)), true)) as typeof process.stderr.write
  try {
    const result = await run()
    return { result, stdout: out.join(''), stderr: err.join('') }
  } finally {
    process.stdout.write = stdoutWrite
    process.stderr.write = stderrWrite
  }
}

/**
 * Link a device of the transport by QR through the peer, send it a text from a friend's phone (a pkmsg:
 * libsignal closes the device's earlier session in favour of the prekey bundle and prints it) and send
 * one back, with an
 * unrelated console.info and console.warn of the host in the middle.
 */
async function exchange(peer: WaPeer, transport: BaileysTransport, received: string[]): Promise<void> {
  const challenge = await transport.link('dev', {})
  assert.is(challenge.kind, 'qr')
  await peer.phone(SHOP).scan(challenge.kind === 'qr' ? challenge.qr : '')
  await waitFor(async () => (await transport.status('dev')).connected, 10_000, 'the device to connect')
  const friend = peer.phone(FRIEND, { pushName: 'Amiga' })
  const incoming = friend.sendText(SHOP, 'Quero um orçamento')
  await waitFor(() => received.includes(incoming.id), 10_000, 'the device to decrypt the friend message')
  console.info('host line: order', { id: 42 })
  console.warn('Session already closed (not from libsignal)', 7)
  const sent = await transport.send('dev', FRIEND, { kind: 'text', text: 'Olá' })
  await waitFor(() => friend.inbox.some(m => m.id === sent.id), 10_000, 'the friend to decrypt the answer')
}

async function run(quietSignalLogs: boolean) {
  const peer = await startWaPeer()
  const restoreRoot = peer.trustRoot()
  const debug: Debug[] = []
  const logger: Logger = { ...silentLogger, debug: (obj, msg) => void debug.push({ obj, msg }) }
  const received: string[] = []
  const consoleBefore = [console.info, console.warn, console.error]
  const transport = baileysTransport({
    resolveVersion: async () => [2, 3000, 1],
    // Loopback only: the real makeWASocket connects to this peer, never to WhatsApp.
    socketConfig: { waWebSocketUrl: peer.url, connectTimeoutMs: 5_000 },
    linkTimeoutMs: 5_000,
    quietSignalLogs,
  })
  try {
    const { stdout, stderr } = await captureOutput(async () => {
      await transport.start({
        storage: new RecordingStorage(),
        logger,
        emit: async event => void (event.type === 'message' && received.push(event.message.id)),
      })
      try {
        await exchange(peer, transport, received)
      } finally {
        await transport.stop()
      }
    })
    const restored = [console.info, console.warn, console.error].every((method, i) => method === consoleBefore[i])
    return { stdout, stderr, debug, restored, problems: peer.records.problems }
  } finally {
    restoreRoot()
    await peer.close()
  }
}

logs(
  'quietSignalLogs on (default): no session record reaches stdout/stderr; libsignal lines reach the logger at debug as text; host lines pass unchanged; console restored at stop',
  async () => {
    const { stdout, stderr, debug, restored, problems } = await run(true)
    assert.equal(problems, [])
    assert.not.match(stdout + stderr, SECRETS)
    const signal = debug.filter(d => (d.obj as { module?: string }).module === 'libsignal')
    assert.ok(
      signal.some(d => d.msg === 'Closing session:') && signal.some(d => d.msg === 'Closing open session in favor of incoming prekey bundle'),
      `libsignal's "Closing session:" and "Closing open session ..." at debug: ${JSON.stringify(signal.map(d => d.msg))}`,
    )
    for (const d of signal) {
      assert.equal(Object.keys(d.obj as object).sort(), ['module', 'source'], 'only the message text, never the session object')
      assert.not.match(JSON.stringify(d), /chainKey|privKey|rootKey/)
    }
    assert.ok(stdout.includes('host line: order { id: 42 }\n'), `the host's console.info on stdout, unchanged: ${JSON.stringify(stdout)}`)
    assert.ok(stderr.includes('Session already closed (not from libsignal) 7\n'), `the host's console.warn on stderr, unchanged: ${JSON.stringify(stderr)}`)
    assert.ok(restored, 'console.info/warn/error are the functions they were before start()')
  },
)

logs('quietSignalLogs off: libsignal prints its session records (what the filter keeps off the console)', async () => {
  const { stdout, debug } = await run(false)
  assert.match(stdout, /Closing session:/)
  assert.match(stdout, /chainKey|privKey/)
  assert.ok(!debug.some(d => (d.obj as { module?: string }).module === 'libsignal'))
})

logs('the filter is reference-counted: installed by the first started transport, removed when the last one stops', async () => {
  const original = console.info
  const [a, b] = [baileysTransport({ resolveVersion: async () => undefined }), baileysTransport({ resolveVersion: async () => undefined })]
  const context = { storage: new RecordingStorage(), logger: silentLogger, emit: async () => {} }
  await a.start(context)
  const filtered = console.info
  assert.is.not(filtered, original)
  await b.start(context)
  assert.is(console.info, filtered, 'installed once')
  await a.stop()
  assert.is(console.info, filtered, 'still installed while another transport runs')
  await b.stop()
  assert.is(console.info, original)
})

logs('recognises exactly libsignal messages: by method and fixed first argument; "Session error" keeps the message, not the stack', () => {
  assert.is(signalMessage('info', ['Closing session:', { chainKey: 'x' }]), 'Closing session:')
  assert.is(signalMessage('warn', ['Closing open session in favor of incoming prekey bundle']), 'Closing open session in favor of incoming prekey bundle')
  assert.is(signalMessage('error', ['Session error:Error: Bad MAC', 'Error: Bad MAC\n    at verifyMAC (crypto.js:87:15)']), 'Session error:Error: Bad MAC')
  assert.is(signalMessage('warn', ['Closing session:', {}]), undefined, 'a different method')
  assert.is(signalMessage('info', ['Closing session: now', {}]), undefined, 'a different text')
  assert.is(signalMessage('info', [{ msg: 'Opening session:' }]), undefined)
  assert.is(signalMessage('error', ['Session error: the app', { id: 1 }]), undefined, 'an app message with an object')
})

logs.run()
