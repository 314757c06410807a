import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { SessionState, TransportEvent } from '../../src/ports/transport.ts'
import { silentLogger } from '../../src/logger.ts'
import type { BaileysTransport } from '../../adapters/transport-baileys/index.ts'
import type { WaPeer } from '../../adapters/wa-peer/index.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'
import { waitFor } from '../helpers/gateway.ts'
import { startedTransport, trustedPeer, type TrustedPeer } from '../helpers/real-stack.ts'

/** Linking on the real Baileys stack: by pairing code, what the peer refuses, and iqs it does not know. */
const link = suite<World>('linking through the WhatsApp peer on the real Baileys stack')

interface World {
  trusted: TrustedPeer
  peer: WaPeer
  transport: BaileysTransport
  events: TransportEvent[]
  /** What the gateway's logger got at error level. */
  errors: string[]
}

/** Symbol-keyed slots the enabled AsyncLocalStorages write into a new promise (Node before 24). */
const slotsOfANewPromise = () => Object.getOwnPropertySymbols(new Promise(() => {})).filter(key => key.description === 'kResourceStore').length

link.before.each(async world => {
  world.trusted = await trustedPeer()
  world.peer = world.trusted.peer
  world.errors = []
  const logger = { ...silentLogger, error: (obj: unknown, msg?: string) => void world.errors.push(`${msg} ${JSON.stringify(obj)}`) }
  const options = { linkTimeoutMs: 5_000, sendTimeoutMs: 5_000 }
  ;({ transport: world.transport, events: world.events } = await startedTransport(world.peer, options, new RecordingStorage(), logger))
})

link.after.each(async world => {
  await world.transport.stop()
  await world.trusted.close()
})

link('by pairing code: the phone enters the code, derives the ADV secret as the client does, pairs the device, and it logs in', async world => {
  const { peer, transport, events } = world
  const slotsBefore = slotsOfANewPromise()
  const challenge = await transport.link('dev', { phone: '5511999990001', code: 'ABCD2345' })
  assert.equal(challenge, { kind: 'code', code: 'ABCD2345' })
  const device = await peer.phone('5511999990001').enterCode('ABCD2345')
  assert.is(device.jid, '5511999990001:1@s.whatsapp.net')
  await waitFor(() => lastState(events) === 'open', 10_000, 'open')
  assert.equal([peer.stats.pairings, peer.stats.logins], [1, 1])
  assert.equal(peer.records.problems, [])
  // Two sockets (the pairing one, and the one after 515) share one AsyncLocalStorage: at most one new slot.
  assert.ok(slotsOfANewPromise() - slotsBefore <= 1, `${slotsOfANewPromise() - slotsBefore} new slots`)
})

link('a wrong pairing code: the key bundle does not decrypt, nothing is linked', async world => {
  const { peer, transport } = world
  await transport.link('dev', { phone: '5511999990001', code: 'ABCD2345' })
  const error = await peer
    .phone('5511999990001')
    .enterCode('WXYZ6789')
    .then(
      () => undefined,
      (err: Error) => err,
    )
  assert.match(error?.message ?? '', /wrong pairing code/)
  assert.equal(peer.phone('5511999990001').devices(), [])
  assert.is(peer.stats.pairings, 0)
})

link('a QR whose keys are not those of the connection showing it is refused', async world => {
  const { peer, transport } = world
  const challenge = await transport.link('dev', {})
  const qr = challenge.kind === 'qr' ? challenge.qr : ''
  const parts = qr.split(',')
  parts[1] = Buffer.alloc(32, 7).toString('base64') // another Noise key
  const error = await peer
    .phone('5511999990001')
    .scan(parts.join(','))
    .then(
      () => undefined,
      (err: Error) => err,
    )
  assert.match(error?.message ?? '', /noise key/)
  assert.is(peer.stats.pairings, 0)
})

link('an iq the peer does not know is recorded and answered with an error, so the call fails at once', async world => {
  const { peer, transport, events } = world
  const challenge = await transport.link('dev', {})
  await peer.phone('5511999990001').scan(challenge.kind === 'qr' ? challenge.qr : '')
  await waitFor(() => lastState(events) === 'open', 10_000, 'open')
  assert.equal(peer.records.unknownIqs, [], 'every iq of a login and of the init queries is known')
  assert.equal(world.errors, [], 'a link (whose 515 restart Baileys logs as an error) logs no error')
  const started = Date.now()
  // This peer runs no media host, so the media_conn iq of an upload is one it does not know.
  peer.phone('5511988880002')
  const error = await transport
    .send('dev', '5511988880002', {
      kind: 'media',
      media: 'document',
      file: { data: Buffer.from('%PDF-1.4 wa-peer'), mimetype: 'application/pdf', fileName: 'a.pdf' },
    })
    .then(
      () => undefined,
      (err: Error) => err,
    )
  assert.ok(error, 'the call failed')
  assert.ok(Date.now() - started < 4_000, 'well before the 5 s send timeout')
  assert.is(peer.records.unknownIqs.at(-1)?.attrs.xmlns, 'w:m')
})

link('logout from the gateway removes the device from the linked devices of the phone (remove-companion-device)', async world => {
  const { peer, transport, events } = world
  const challenge = await transport.link('dev', {})
  await peer.phone('5511999990001').scan(challenge.kind === 'qr' ? challenge.qr : '')
  await waitFor(() => lastState(events) === 'open', 10_000, 'open')
  await transport.logout('dev')
  await waitFor(() => peer.phone('5511999990001').devices().length === 0, 5_000, 'the device to be removed')
  assert.equal(peer.records.unknownIqs, [])
})

link.run()

// --- Internal helpers ---

function lastState(events: TransportEvent[]): SessionState | undefined {
  const last = events.filter(e => e.type === 'status').at(-1)
  return last?.type === 'status' ? last.status.state : undefined
}
