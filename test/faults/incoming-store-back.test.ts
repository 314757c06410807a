import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { internalsOf } from '../../src/internals.ts'
import { startGateway, waitFor } from '../helpers/gateway.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { outboxKeyOfText } from '../helpers/messaging.ts'
import { freePort, tempDir } from '../helpers/standalone.ts'
import { switchable } from '../helpers/switchable-storage.ts'

/**
 * Incoming messages that arrive while the store refuses are kept (in memory) and the transport is told
 * they were recorded. Once the store answers again, a new message must be in the store when the
 * transport's emit returns: kept in memory behind the others until the buffer's next retry (up to 30 s
 * later), a process killed meanwhile lost it although the store was up.
 */
const test = suite('incoming messages once the store answers again')

const DEVICE_PHONE = '5511999990001'

test('a message that arrives after the store answers again is in the store when the transport’s emit returns', async () => {
  const inner = memoryStorage()
  const store = switchable(inner)
  // cacheTtlMs 0: every message reads its device from the store, so one arriving while it is down waits in the incoming buffer.
  const t = await startGateway({ storage: store.storage, cacheTtlMs: 0, allowPrivateUrls: true, rateLimit: false, spillDir: tempDir('zapgate-spill-') })
  try {
    const { authkey } = await t.register()
    // A receiver that is never there: the events stay in the outbox, where the test looks for them.
    const device = await t.linkedDevice(authkey, 'loja', DEVICE_PHONE, { webhook: `http://127.0.0.1:${await freePort()}/hook` })
    const stored = (id: string, from: string) => inner.get(outboxKeyOfText(device, id, from))

    store.down = true
    const during = await t.network.sendFromPhone('5511988880001', DEVICE_PHONE, { type: 'text', text: 'while the store is down' })
    assert.is(internalsOf(t.gateway).incoming.size, 1, 'kept in memory, the store being down')
    // Past the buffer's first retry (1 s), which fails: its next one is 2 s after it.
    await new Promise(resolve => setTimeout(resolve, 1_500))

    store.down = false
    const up = await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })
    assert.is(up.status, 200, 'the store answers again')
    const after = await t.network.sendFromPhone('5511988880002', DEVICE_PHONE, { type: 'text', text: 'once the store is back' })
    assert.ok(await stored(after, '5511988880002'), 'the message that arrived once the store was back is in the store when emit returns')
    assert.ok(await stored(during, '5511988880001'), 'and the one kept while it was down, before it')
    await waitFor(() => internalsOf(t.gateway).incoming.size === 0, 5_000, 'nothing left waiting')
  } finally {
    store.down = false
    await t.stop()
  }
})

test.run()
