import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { MemoryNetwork } from '../../adapters/transport-memory/index.ts'

const test = suite('transport-memory: the network refuses limits that would not bound it')

test('a limit that is not a whole number of at least 1 is refused, naming it', () => {
  // Before: NaN (GATEWAY_SIM_LOG_LIMIT=abc) or a negative size kept every message, inbox entry and phone: memory grew without end.
  for (const name of ['logLimit', 'inboxLimit', 'phoneLimit', 'offlineLimit', 'groupLimit'] as const) {
    for (const value of [Number.NaN, -1, 0, 2.5]) {
      assert.throws(() => new MemoryNetwork({ [name]: value }), new RegExp(name), `${name}: ${value}`)
    }
  }
  const network = new MemoryNetwork({ inboxLimit: 2 })
  for (const text of ['a', 'b', 'c', 'd', 'e']) network.post.receipt('5511988880002', '5511999990001', text)
  assert.deepEqual(
    network.inbox('5511999990001').map(e => e.type === 'read' && e.target),
    ['d', 'e'],
  )
})

test.run()
