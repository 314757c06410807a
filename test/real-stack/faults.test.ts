import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { SessionState, TransportEvent } from '../../src/ports/transport.ts'
import type { BaileysTransport } from '../../adapters/transport-baileys/index.ts'
import type { WaPeer } from '../../adapters/wa-peer/index.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'
import { waitFor } from '../helpers/gateway.ts'
import { startedTransport, trustedPeer, type StartedTransport, type TrustedPeer } from '../helpers/real-stack.ts'

/**
 * Stream errors and connection faults the peer injects on a linked device, through the Baileys
 * transport on the real stack: what the adapter does with each (reconnect, report, stop).
 */
const faults = suite<World>('faults of the WhatsApp peer on the real Baileys stack')

const SHOP = '5511999990001'

interface World {
  trusted: TrustedPeer
  peer: WaPeer
  storage: RecordingStorage
  transport: BaileysTransport
  events: TransportEvent[]
  jid: string
}

faults.before(async world => {
  world.trusted = await trustedPeer()
  world.peer = world.trusted.peer
  world.storage = new RecordingStorage()
  ;({ transport: world.transport, events: world.events } = await started(world))
  const challenge = await world.transport.link('dev', {})
  assert.is(challenge.kind, 'qr')
  world.jid = (await world.peer.phone(SHOP).scan(challenge.kind === 'qr' ? challenge.qr : '')).jid
  await untilState(world.events, 'open')
})

faults.after(async world => {
  await world.transport?.stop()
  await world.trusted?.close()
})

faults('515 (restart required): the device reconnects and logs in again with its stored credentials, no new pairing', async world => {
  const { peer, events } = world
  const logins = peer.stats.logins
  const mark = events.length
  assert.ok(peer.fault(world.jid, 'restart'))
  await waitFor(() => peer.stats.logins === logins + 1 && lastState(events) === 'open' && events.length > mark, 10_000, 'a new login')
  assert.is(peer.stats.pairings, 1)
})

faults('428 (the server ends the stream): the device reconnects and is open again', async world => {
  const { peer, events } = world
  const logins = peer.stats.logins
  assert.ok(peer.fault(world.jid, 'stream-end'))
  await waitFor(() => peer.stats.logins === logins + 1 && lastState(events) === 'open', 10_000, 'a new login')
})

faults('a cut TCP connection: the device reconnects with back-off and is open again', async world => {
  const { peer, events } = world
  const logins = peer.stats.logins
  assert.ok(peer.fault(world.jid, 'drop'))
  await waitFor(() => peer.stats.logins === logins + 1 && lastState(events) === 'open', 10_000, 'a new login')
})

faults(
  'a second connection of the device (another transport on the same store) closes the first with conflict: replaced is counted and the first reports replaced',
  async world => {
    const { peer } = world
    const second = await started(world)
    try {
      await second.transport.connect('dev')
      await untilState(second.events, 'open')
      await untilState(world.events, 'replaced')
      assert.is(peer.stats.replaced, 1)
      await new Promise(resolve => setTimeout(resolve, 300))
      assert.is(lastState(world.events), 'replaced', 'the replaced transport does not fight back')
      assert.is(peer.stats.replaced, 1)
    } finally {
      await second.transport.stop()
    }
    await world.transport.connect('dev')
    await untilState(world.events, 'open')
  },
)

faults('440 sent by the server: the device reports replaced and stays closed until told to connect', async world => {
  const { peer, events } = world
  const logins = peer.stats.logins
  assert.ok(peer.fault(world.jid, 'replaced'))
  await untilState(events, 'replaced')
  await new Promise(resolve => setTimeout(resolve, 300))
  assert.is(peer.stats.logins, logins, 'no reconnect')
  await world.transport.connect('dev')
  await untilState(events, 'open')
})

faults('silence (the server stops answering): Baileys keep-alive gives up (408) and the device reconnects', async world => {
  const { peer, events } = world
  const logins = peer.stats.logins
  assert.ok(peer.fault(world.jid, 'silence'))
  await waitFor(() => peer.stats.logins === logins + 1 && lastState(events) === 'open', 15_000, 'a new login after the keep-alive gave up')
  assert.equal(peer.records.unknownIqs, [])
})

faults('401 (the phone unlinks the device): logged-out, and its credentials are gone', async world => {
  const { peer, events } = world
  assert.ok(peer.fault(world.jid, 'logged-out'))
  await untilState(events, 'logged-out')
  assert.equal(peer.phone(SHOP).devices(), [])
  assert.is((await world.transport.status('dev')).state, 'logged-out')
})

faults.run()

// --- Internal helpers ---

/** A started transport on the real stack against the world's peer and store, with its events; a short keep-alive so that a silent server is noticed in seconds. */
function started(world: World): Promise<StartedTransport> {
  return startedTransport(world.peer, { socketConfig: { keepAliveIntervalMs: 1_000 } }, world.storage)
}

function lastState(events: TransportEvent[]): SessionState | undefined {
  const last = events.filter(e => e.type === 'status').at(-1)
  return last?.type === 'status' ? last.status.state : undefined
}

async function untilState(events: TransportEvent[], state: SessionState): Promise<void> {
  await waitFor(() => lastState(events) === state, 10_000, `state ${state} (last: ${lastState(events)})`)
}
