import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { TransportEvent } from '../../src/ports/transport.ts'
import { silentLogger } from '../../src/logger.ts'
import { baileysTransport } from '../../adapters/transport-baileys/index.ts'
import { startFakeWhatsApp } from '../helpers/fake-wa-server.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'
import { waitFor } from '../helpers/fake-baileys-socket.ts'

const stack = suite('Baileys transport over the real Baileys stack and a local Noise peer (no fake socket)')

stack('the default socket factory completes the Noise handshake with a local peer and link() answers its QR', async () => {
  const server = await startFakeWhatsApp({ refs: ['REF-ONE', 'REF-TWO'] })
  const restoreRoot = server.trustRoot()
  const events: TransportEvent[] = []
  const transport = baileysTransport({
    resolveVersion: async () => [2, 3000, 1],
    // Loopback only: the real makeWASocket connects to this peer, never to WhatsApp.
    socketConfig: { waWebSocketUrl: server.url, connectTimeoutMs: 5_000, qrTimeout: 200 },
    linkTimeoutMs: 5_000,
  })
  try {
    await transport.start({ storage: new RecordingStorage(), logger: silentLogger, emit: async event => void events.push(event) })
    const challenge = await transport.link('dev', {})
    assert.is(challenge.kind, 'qr')
    const parts = challenge.kind === 'qr' ? challenge.qr.split('#')[1].split(',') : []
    assert.ok(challenge.kind === 'qr' && challenge.qr.startsWith('https://wa.me/settings/linked_devices#REF-ONE,'), JSON.stringify(challenge))
    assert.is(parts.length, 5)
    assert.is(server.payloads.length, 1)
    assert.ok(server.payloads[0].devicePairingData, 'a registration payload for fresh credentials')
    assert.equal(server.payloads[0].userAgent?.appVersion && [server.payloads[0].userAgent.appVersion.primary, server.payloads[0].userAgent.appVersion.secondary], [2, 3000])
    await waitFor(() => server.nodes.some(n => n.tag === 'iq' && n.attrs.id === 'pair-1' && n.attrs.type === 'result'), 'the pair-device ack')
    await waitFor(() => events.some(e => e.type === 'qr'), 'the refreshed QR (second ref)', 3_000)
    const refresh = events.find(e => e.type === 'qr')
    assert.ok(refresh?.type === 'qr' && refresh.qr.includes('#REF-TWO,'))
    assert.equal(events.filter(e => e.type === 'status').map(e => e.type === 'status' && e.status.state), ['linking'])
  } finally {
    await transport.stop()
    restoreRoot()
    await server.close()
  }
})

stack.run()
