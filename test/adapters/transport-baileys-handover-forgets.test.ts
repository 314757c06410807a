import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { setupBaileys } from '../helpers/baileys-setup.ts'
import { waitFor } from '../helpers/fake-baileys/index.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'

test('devices an instance handed over (disconnect) and another instance then deleted: the first keeps no session of them', async () => {
  const storage = new RecordingStorage()
  const first = await setupBaileys({ storage })
  const second = await setupBaileys({ storage })
  const ids = Array.from({ length: 100 }, (_, i) => `dev-${i}`)
  try {
    for (const [i, id] of ids.entries()) {
      await first.linked(id, `55119${String(i).padStart(8, '0')}`)
      await first.transport.disconnect(id)
      await second.transport.connect(id)
      await waitFor(() => second.statuses(id).at(-1)?.state === 'open', `${id} open on the second instance`)
      await second.transport.logout(id)
    }
    const kept = ids.filter(id => first.transport.statusNow(id) !== undefined)
    assert.equal(kept, [], 'the first instance holds nothing of the devices it let go (their memory, caches and last status)')
    const gone = await first.transport.status('dev-0')
    assert.equal([gone.state, gone.connected, gone.phone], ['closed', false, undefined], 'asked, it reads the store: deleted')
  } finally {
    await first.transport.stop()
    await second.transport.stop()
  }
})

test('a device let go and taken back by the same instance connects again with the stored credentials', async () => {
  const storage = new RecordingStorage()
  const s = await setupBaileys({ storage })
  try {
    await s.linked('dev', '5511900000001')
    await s.transport.disconnect('dev')
    assert.equal((await s.transport.status('dev')).phone, '5511900000001', 'still linked: its phone read from the store')
    await s.transport.connect('dev')
    await waitFor(() => s.transport.statusNow('dev')?.state === 'open', 'open again')
  } finally {
    await s.transport.stop()
  }
})

test.run()
