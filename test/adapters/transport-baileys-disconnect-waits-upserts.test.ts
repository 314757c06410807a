import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { silentLogger } from '../../src/logger.ts'
import type { TransportEvent } from '../../src/ports/transport.ts'
import { baileysTransport } from '../../adapters/transport-baileys/index.ts'
import { FakeBaileys, settle, waitFor } from '../helpers/fake-baileys/index.ts'
import { BOB_JID, ME, waMessage } from '../helpers/baileys-fixtures.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'

// The gateway's lease holder calls disconnect() to hand a device over; once it resolves, another
// instance resumes the device. Messages Baileys already upserted (their receipts sent: WhatsApp
// never delivers them again) are still being reported on this instance: an event of the device
// from the old holder after the hand-over, and the new holder does not know them (a restart-style
// duplicate check reads the message store, which they reach only after their emit).
async function open(options: { slowEmit?: string; downloadMedia?: (m: unknown) => Promise<Buffer> } = {}) {
  const fake = new FakeBaileys()
  const log: string[] = []
  let release!: () => void
  const gate = new Promise<void>(resolve => (release = resolve))
  const emit = async (event: TransportEvent) => {
    if (event.type !== 'message') return
    if (event.message.id === options.slowEmit) await gate
    log.push(`message ${event.message.id}`)
  }
  const storage = new RecordingStorage()
  const transport = baileysTransport({
    ...fake.transportOptions(),
    ...(options.downloadMedia ? { downloadMedia: options.downloadMedia as never } : {}),
    reconnect: { initialDelayMs: 5, maxDelayMs: 40, jitter: 0 },
  })
  await transport.start({ storage, logger: silentLogger, emit })
  await transport.link('dev', {})
  await fake.completeLink('dev', ME)
  await waitFor(() => transport.statusNow('dev')?.state === 'open', 'open')
  return { fake, transport, storage, log, release }
}

test('disconnect() resolves only once the messages already upserted are reported (none is reported by the old holder after the hand-over)', async () => {
  const s = await open({ slowEmit: 'SLOW1' })
  try {
    s.fake
      .current('dev')
      .upsert([
        waMessage({ chat: BOB_JID, id: 'SLOW1', message: { conversation: 'one' } }),
        waMessage({ chat: BOB_JID, id: 'NEXT2', message: { conversation: 'two' } }),
      ])
    await settle()
    setTimeout(() => s.release(), 150)
    await s.transport.disconnect('dev')
    s.log.push('disconnected')
    await new Promise(resolve => setTimeout(resolve, 300))
    assert.equal(s.log, ['message SLOW1', 'message NEXT2', 'disconnected'])
    assert.ok(await s.storage.get('device:dev:msg:NEXT2'), 'remembered before the hand-over')
  } finally {
    s.release()
    await s.transport.stop()
  }
})

test('disconnect() resolves only once received media being downloaded is reported', async () => {
  const s = await open({ downloadMedia: () => new Promise(resolve => setTimeout(() => resolve(Buffer.from('img')), 150)) })
  try {
    await s.fake.deliver('dev', waMessage({ chat: BOB_JID, id: 'PHOTO1', message: { imageMessage: { mimetype: 'image/jpeg', fileLength: 3 } } }))
    await s.transport.disconnect('dev')
    s.log.push('disconnected')
    await new Promise(resolve => setTimeout(resolve, 300))
    assert.equal(s.log, ['message PHOTO1', 'disconnected'])
  } finally {
    await s.transport.stop()
  }
})

test.run()
