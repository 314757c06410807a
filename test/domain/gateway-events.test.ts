import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { GatewayEvents } from '../../src/events.ts'

const test = suite('gateway events: a host listener that throws')

test('never reaches the gateway, and the listeners after it are still called (once-listeners once)', () => {
  const events = new GatewayEvents()
  const calls: string[] = []
  events.on('send', () => {
    throw new Error('a host bug')
  })
  events.on('send', ({ kind }) => void calls.push(`on ${kind}`))
  events.once('send', ({ kind }) => void calls.push(`once ${kind}`))
  assert.is(events.emit('send', { deviceId: 'd', kind: 'text', ok: true }), true)
  assert.is(events.emit('send', { deviceId: 'd', kind: 'read', ok: true }), true)
  assert.equal(calls, ['on text', 'once text', 'on read'])
  assert.is(events.emit('lease', { deviceId: 'd', action: 'acquired' } as never), false, 'nobody listens')
})

test('an async listener whose promise rejects never reaches the gateway either: no unhandled rejection (the process would stop)', async () => {
  const events = new GatewayEvents()
  const unhandled: unknown[] = []
  const seen = (reason: unknown) => void unhandled.push(reason)
  process.on('unhandledRejection', seen)
  try {
    events.on('send', async () => {
      throw new Error('a host bug in an async listener')
    })
    assert.is(events.emit('send', { deviceId: 'd', kind: 'text', ok: true }), true)
    await new Promise(resolve => setImmediate(resolve)) // unhandled rejections are reported once the microtasks ran
    assert.equal(unhandled, [])
  } finally {
    process.off('unhandledRejection', seen)
  }
})

test.run()
