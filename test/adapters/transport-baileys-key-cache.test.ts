import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { TransportEvent } from '../../src/ports/transport.ts'
import { silentLogger } from '../../src/logger.ts'
import { baileysTransport } from '../../adapters/transport-baileys/index.ts'
import { SignalKeyCache, signalKeyCache } from '../../adapters/transport-baileys/cache.ts'
import { startWaPeer } from '../../adapters/wa-peer/index.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'
import { waitFor } from '../helpers/gateway.ts'

/** The signal key cache: one bound for every device of the process, no pre-keys, and the store behind it. */
const cache = suite('the Baileys signal key cache')

cache('one bound for all devices: the oldest entries go first, whichever device wrote them', () => {
  const keys = new SignalKeyCache(5, 60_000)
  const [a, b] = [keys.view(), keys.view()]
  for (let i = 0; i < 4; i++) a.set(`session.a${i}`, { i })
  for (let i = 0; i < 4; i++) b.set(`session.b${i}`, { i })
  assert.is(keys.size, 5)
  assert.equal([a.get('session.a0'), a.get('session.a2'), a.get('session.a3')], [undefined, undefined, { i: 3 }])
  assert.equal(b.get('session.b0'), { i: 0 })
  assert.is(a.get('session.b0'), undefined, "a device does not read another's keys")
  keys.close()
})

cache('pre-keys are never kept (read from the store when a pkmsg arrives); a write of one drops a cached copy', () => {
  const keys = new SignalKeyCache(1_000, 60_000)
  const view = keys.view()
  for (let i = 1; i <= 812; i++) view.set(`pre-key.${i}`, { keyPair: { public: Buffer.alloc(32), private: Buffer.alloc(32) } })
  view.set('session.5511@s.whatsapp.net', 'record')
  view.set('identity-key.5511', 'identity')
  assert.is(keys.size, 2)
  assert.is(view.get('pre-key.1'), undefined)
  assert.is(view.get('session.5511@s.whatsapp.net'), 'record')
  keys.close()
})

cache("flushAll forgets one device's keys only; expired entries are swept without being read", () => {
  const keys = new SignalKeyCache(100, 60_000)
  const [a, b] = [keys.view(), keys.view()]
  a.set('session.x', 1)
  b.set('session.x', 2)
  void a.flushAll()
  assert.equal([a.get('session.x'), b.get('session.x')], [undefined, 2])
  keys.sweep(Date.now() + 59_000)
  assert.is(keys.size, 1, 'not expired yet')
  keys.sweep(Date.now() + 60_001)
  assert.is(keys.size, 0)
  keys.close()
})

cache(
  'real stack: a linked device keeps none of its 812 pre-keys in memory; after the cache is emptied a pkmsg still decrypts (pre-key and all from the store) and the device answers',
  async () => {
    const peer = await startWaPeer()
    const restoreRoot = peer.trustRoot()
    const storage = new ReadRecordingStorage()
    const events: TransportEvent[] = []
    const transport = baileysTransport({
      resolveVersion: async () => [2, 3000, 1],
      socketConfig: { waWebSocketUrl: peer.url, connectTimeoutMs: 5_000 },
      linkTimeoutMs: 10_000,
      sendTimeoutMs: 10_000,
    })
    try {
      await transport.start({ storage, logger: silentLogger, emit: async event => void events.push(event) })
      await transport.link('dev', { phone: '5511999990001', code: 'ABCD2345' })
      await peer.phone('5511999990001').enterCode('ABCD2345')
      await waitFor(() => events.some(e => e.type === 'status' && e.status.state === 'open'), 10_000, 'open')
      const stored = () => storage.keys().filter(key => key.includes(':key:pre-key:'))
      await waitFor(() => stored().length >= 800, 30_000, 'the pre-keys stored').catch(err => {
        throw new Error(`${err.message}: ${stored().length} pre-keys, keys ${storage.keys().slice(0, 20).join(' ')}`)
      })
      const preKeys = stored()
      assert.ok(signalKeyCache.size < 100, `the cache holds ${signalKeyCache.size} entries, not the ${preKeys.length} pre-keys`)

      signalKeyCache.clear()
      const friend = peer.phone('5511988880002')
      const sent = friend.sendText('5511999990001', 'first message: a pkmsg')
      await waitFor(() => received(events).includes('first message: a pkmsg'), 10_000, 'the pkmsg decrypted')
      assert.is(peer.records.nodes.length > 0, true)
      const readPreKeys = storage.reads.filter(key => key.includes(':key:pre-key:') && preKeys.includes(key))
      assert.ok(readPreKeys.length >= 1, 'the pre-key the pkmsg names was read from the store')
      await waitFor(() => !storage.keys().includes(readPreKeys[readPreKeys.length - 1]), 5_000, 'the used pre-key deleted')
      assert.ok(sent.id)

      signalKeyCache.clear()
      const reply = await transport.send('dev', '5511988880002', { kind: 'text', text: 'an answer on the session from the store' })
      await waitFor(() => friend.inbox.some(m => m.id === reply.id), 10_000, 'the phone decrypted the answer')
      friend.sendText('5511999990001', 'second message: a msg')
      await waitFor(() => received(events).includes('second message: a msg'), 10_000, 'the second message decrypted')
      assert.equal(peer.records.problems, [])
    } finally {
      await transport.stop()
      await peer.close()
      restoreRoot()
    }
  },
)

cache.run()

// --- Internal helpers ---

/** RecordingStorage that also records the keys read. */
class ReadRecordingStorage extends RecordingStorage {
  readonly reads: string[] = []
  override async get<T = unknown>(key: string): Promise<T | undefined> {
    this.reads.push(key)
    return super.get<T>(key)
  }
}

/** The texts of the messages the transport reported. */
function received(events: TransportEvent[]): string[] {
  return events.flatMap(e => (e.type === 'message' && e.message.content.kind === 'text' ? [e.message.content.text] : []))
}
