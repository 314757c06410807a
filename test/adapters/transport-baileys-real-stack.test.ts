import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { BaileysTransportOptions } from '../../adapters/transport-baileys/index.ts'
import { startWaPeer, type WaPeer } from '../../adapters/wa-peer/index.ts'
import { startedTransport, trustedPeer } from '../helpers/real-stack.ts'
import { waitFor } from '../helpers/fake-baileys/index.ts'
import { transportRejection } from '../helpers/transport-errors.ts'

const stack = suite('Baileys transport over the real Baileys stack and a local Noise peer (no fake socket)')

stack('the default socket factory completes the Noise handshake with a local peer and link() answers its QR', async () => {
  const trusted = await trustedPeer({ qrRefs: ['REF-ONE', 'REF-TWO'] })
  const server = trusted.peer
  const { transport, events } = await realTransport(server)
  try {
    const challenge = await transport.link('dev', {})
    assert.is(challenge.kind, 'qr')
    const parts = challenge.kind === 'qr' ? challenge.qr.split('#')[1].split(',') : []
    assert.ok(challenge.kind === 'qr' && challenge.qr.startsWith('https://wa.me/settings/linked_devices#REF-ONE,'), JSON.stringify(challenge))
    assert.is(parts.length, 5)
    assert.is(server.records.payloads.length, 1)
    assert.ok(server.records.payloads[0].devicePairingData, 'a registration payload for fresh credentials')
    assert.equal(
      server.records.payloads[0].userAgent?.appVersion && [
        server.records.payloads[0].userAgent.appVersion.primary,
        server.records.payloads[0].userAgent.appVersion.secondary,
      ],
      [2, 3000],
    )
    await waitFor(() => server.records.nodes.some(n => n.tag === 'iq' && n.attrs.id.startsWith('pair-') && n.attrs.type === 'result'), 'the pair-device ack')
    await waitFor(() => events.some(e => e.type === 'qr'), 'the refreshed QR (second ref)', 3_000)
    const refresh = events.find(e => e.type === 'qr')
    assert.ok(refresh?.type === 'qr' && refresh.qr.includes('#REF-TWO,'))
    assert.equal(
      events.filter(e => e.type === 'status').map(e => e.type === 'status' && e.status.state),
      ['linking'],
    )
  } finally {
    await transport.stop()
    await trusted.close()
  }
})

/** A started transport on the real Baileys stack (default factory) against `peer` (open or closed), recording its events. */
function realTransport(peer: WaPeer, options: Partial<BaileysTransportOptions> = {}) {
  return startedTransport(peer, { linkTimeoutMs: 5_000, ...options, socketConfig: { qrTimeout: 200 } })
}

stack(
  'a refused WebSocket upgrade (HTTP 503 from the edge): the real stack stays connecting forever without the watch; link() answers unreachable at once',
  async () => {
    const server = await startWaPeer()
    server.refuseUpgrades(503)
    // The watch and the link time-out far off: only the refused upgrade can answer within the bound.
    const { transport, events } = await realTransport(server, { openTimeoutMs: 30_000, linkTimeoutMs: 30_000 })
    try {
      const started = Date.now()
      const error = await transportRejection(transport.link('dev', {}))
      assert.is(error.code, 'unreachable')
      assert.match(error.message, /refused the connection: HTTP 503 at the WebSocket upgrade/)
      assert.ok(Date.now() - started < 15_000, `answered in ${Date.now() - started} ms, well before the 30 s watch or link timeout`)
      assert.is(server.stats.upgrades, 1)
      const status = events.filter(e => e.type === 'status').at(-1)
      assert.ok(status?.type === 'status' && status.status.state === 'closed' && /HTTP 503/.test(status.status.reason ?? ''), JSON.stringify(status))
    } finally {
      await transport.stop()
      await server.close()
    }
  },
)

stack('nothing listening (ECONNREFUSED, which Baileys codes 408 like an expired QR): link() answers unreachable, not "QR expired"', async () => {
  const server = await startWaPeer()
  await server.close() // the port is now closed
  const { transport } = await realTransport(server, { openTimeoutMs: 4_000 })
  try {
    const error = await transportRejection(transport.link('dev', {}))
    assert.is(error.code, 'unreachable')
    assert.match(error.message, /^WhatsApp cannot be reached from this server \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/)
  } finally {
    await transport.stop()
  }
})

stack.run()
