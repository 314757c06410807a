import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { IncomingMessage, TransportEvent } from '../../src/ports/transport.ts'
import type { BaileysTransport } from '../../adapters/transport-baileys/index.ts'
import type { WaPeer } from '../../adapters/wa-peer/index.ts'
import { waitFor } from '../helpers/gateway.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'
import { SHOP, startedTransport, trustedPeer } from '../helpers/real-stack.ts'

/**
 * Messages Baileys holds in its event buffer. From a login until the offline marker (`<ib><offline/>`,
 * after the backlog of messages that waited) Baileys decrypts each offline message and sends its
 * receipt at once, but emits messages.upsert only when it flushes the buffer; ending the socket
 * destroys the buffer. WhatsApp never delivers a receipted message again: one the adapter has not
 * taken when the socket ends is lost. The peer here never sends the marker (a backlog still arriving).
 */
const buffered = suite('messages Baileys buffered when the socket ends (real stack)')

const FRIEND = '5511988880002'

const endings: [string, (transport: BaileysTransport, peer: WaPeer, jid: string) => Promise<unknown>][] = [
  ['stop()', transport => transport.stop()],
  ['disconnect()', transport => transport.disconnect('dev')],
  ['the network (TCP cut)', async (_, peer, jid) => peer.fault(jid, 'drop')],
]

for (const [how, end] of endings) {
  buffered(`an offline message receipted while Baileys buffers is still reported when ${how} ends the socket`, async () => {
    const trusted = await trustedPeer({ endHistoryWait: false, offlineMarker: false })
    const { peer } = trusted
    const { transport, events } = await startedTransport(peer, {}, new RecordingStorage())
    try {
      const challenge = await transport.link('dev', {})
      const { jid } = await peer.phone(SHOP).scan(challenge.kind === 'qr' ? challenge.qr : '')
      await waitFor(() => lastState(events) === 'open', 10_000, 'open')
      await transport.disconnect('dev')
      const sent = peer.phone(FRIEND, { pushName: 'Amiga' }).sendText(SHOP, 'chegou?')
      await transport.connect('dev')
      await waitFor(
        () => peer.phone(FRIEND).receipts.some(r => r.ids.includes(sent.id)),
        10_000,
        'the receipt of the offline message: WhatsApp will not deliver it again',
      )
      await end(transport, peer, jid)
      await waitFor(() => messages(events).length > 0 || lastState(events) !== 'open', 10_000, 'the socket ended')
      await transport.stop()
      assert.equal(
        messages(events).map(m => [m.id, m.from, m.content]),
        [[sent.id, FRIEND, { kind: 'text', text: 'chegou?' }]],
      )
    } finally {
      await transport.stop()
      await trusted.close()
    }
  })
}

buffered.run()

// --- Internal helpers ---

function messages(events: TransportEvent[]): IncomingMessage[] {
  return events.flatMap(e => (e.type === 'message' ? [e.message] : []))
}

function lastState(events: TransportEvent[]): string | undefined {
  const last = events.filter(e => e.type === 'status').at(-1)
  return last?.type === 'status' ? last.status.state : undefined
}
