import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { silentLogger } from '../../src/logger.ts'
import type { TransportContext } from '../../src/ports/transport.ts'
import { MemoryNetwork, memoryTransport } from '../../adapters/transport-memory/index.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'

test('devices an instance handed over (disconnect) and another instance then deleted: the first keeps no session of them', async () => {
  const network = new MemoryNetwork()
  const context: TransportContext = { storage: memoryStorage(), logger: silentLogger, emit: async () => {} }
  const [first, second] = [memoryTransport({ network }), memoryTransport({ network })]
  await first.start(context)
  await second.start(context)
  const ids = Array.from({ length: 200 }, (_, i) => `dev-${i}`)
  for (const [i, id] of ids.entries()) {
    const challenge = await first.link(id, {})
    await network.scan({ qr: (challenge as { qr: string }).qr }, `55119${String(i).padStart(8, '0')}`)
    await first.disconnect(id)
    await second.connect(id)
    assert.is(second.statusNow(id)?.state, 'open')
    await second.logout(id)
  }
  assert.equal(
    ids.filter(id => first.statusNow(id) !== undefined),
    [],
    'the first instance holds nothing of the devices it let go',
  )
  assert.equal((await first.status('dev-0')).phone, undefined, 'asked, it reads the store: deleted')
  await first.stop()
  await second.stop()
})

test('a device let go and taken back by the same instance is open again', async () => {
  const network = new MemoryNetwork()
  const transport = memoryTransport({ network })
  await transport.start({ storage: memoryStorage(), logger: silentLogger, emit: async () => {} })
  const challenge = await transport.link('dev', {})
  await network.scan({ qr: (challenge as { qr: string }).qr }, '5511900000001')
  await transport.disconnect('dev')
  assert.equal((await transport.status('dev')).connected, false)
  assert.is((await transport.status('dev')).phone, '5511900000001', 'still linked: its phone read from the store')
  await transport.connect('dev')
  assert.is(transport.statusNow('dev')?.state, 'open')
  await transport.stop()
})

test.run()
