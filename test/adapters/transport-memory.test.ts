import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { TransportError } from '../../src/ports/transport.ts'
import { transportContract } from '../../src/testing/transport-contract.ts'
import { MemoryNetwork } from '../../adapters/transport-memory/index.ts'
import { linkAs, memoryHarness } from './memory-harness.ts'

const contract = suite('transport-memory: Transport contract')
transportContract(
  (name, fn) => contract(name, fn),
  () => memoryHarness(),
  { validatesTargets: true },
)
contract.run()

const PHONE = '5511999990001'
const FRIEND = '5511988880002'
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))
/** Poll until `condition` holds (at most 2 s), so that timer tests do not depend on machine load. */
async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (const deadline = Date.now() + 2_000; !(await condition()); await sleep(2)) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`)
  }
}
const code = (c: TransportError['code']) => (err: unknown) => err instanceof TransportError && err.code === c

const sessions = suite('transport-memory: sessions')

sessions('link emits a linking status, and the QR looks like the network’s', async () => {
  const h = await memoryHarness()
  const challenge = await h.transport.link('d1', {})
  assert.ok(challenge.kind === 'qr' && /^2@[^,]+,[^,]+,[^,]+,[^,]+$/.test(challenge.qr))
  assert.deepEqual(h.events, [{ type: 'status', deviceId: 'd1', status: { state: 'linking', connected: false } }])
  assert.deepEqual(await h.transport.status('d1'), { state: 'linking', connected: false })
  await h.close()
})

sessions('a replaced QR no longer links the device', async () => {
  const h = await memoryHarness()
  const first = await h.transport.link('d1', {})
  await h.transport.link('d1', {})
  await assert.rejects(h.completeLink('d1', first, PHONE), code('not-found'))
  await h.close()
})

sessions('a pairing code completes only for the phone it was issued for', async () => {
  const h = await memoryHarness()
  await h.transport.link('d1', { phone: `+${PHONE}`, code: '87654321' })
  await assert.rejects(h.network.scan({ code: '87654321' }, FRIEND), code('not-found'))
  await assert.rejects(h.network.scan({ deviceId: 'd1' }, FRIEND), code('invalid'))
  assert.equal(await h.network.scan('87654321', PHONE), 'd1')
  assert.equal((await h.transport.status('d1')).phone, PHONE)
  await h.close()
})

sessions('link refuses a phone without a code, and a code that is not 8 characters', async () => {
  const h = await memoryHarness()
  await assert.rejects(h.transport.link('d1', { phone: PHONE }), code('invalid'))
  await assert.rejects(h.transport.link('d1', { phone: PHONE, code: '123' }), code('invalid'))
  await assert.rejects(h.transport.link('d1', { phone: 'abc', code: '12345678' }), code('invalid'))
  await h.close()
})

sessions('qrRefreshMs rotates the QR with qr events, and older QRs stop working', async () => {
  const h = await memoryHarness({ qrRefreshMs: 10 })
  const first = await h.transport.link('d1', {})
  await until(() => h.events.filter(e => e.type === 'qr').length >= 2, 'two rotations')
  const rotated = h.events.filter(e => e.type === 'qr')
  await assert.rejects(h.completeLink('d1', first, PHONE), code('not-found'))
  const latest = rotated.at(-1)!
  assert.ok(latest.type === 'qr')
  await h.network.scan(latest.qr, PHONE)
  const count = h.events.filter(e => e.type === 'qr').length
  await sleep(25)
  assert.equal(h.events.filter(e => e.type === 'qr').length, count, 'no rotation once linked')
  await h.close()
})

sessions('qrRefreshLimit ends an unscanned link with a closed status', async () => {
  const h = await memoryHarness({ qrRefreshMs: 5, qrRefreshLimit: 2 })
  await h.transport.link('d1', {})
  await until(async () => (await h.transport.status('d1')).state === 'closed', 'the link to time out')
  assert.deepEqual(await h.transport.status('d1'), { state: 'closed', connected: false, reason: 'link timed out' })
  assert.equal(h.events.filter(e => e.type === 'qr').length, 2)
  await h.close()
})

sessions('stop clears the QR timers', async () => {
  const h = await memoryHarness({ qrRefreshMs: 5 })
  await h.transport.link('d1', {})
  await h.transport.stop()
  const count = h.events.length
  await sleep(25)
  assert.equal(h.events.length, count)
  await h.close()
})

sessions('the session is stored under session:<deviceId> and resumes on a fresh network', async () => {
  const h = await memoryHarness()
  await linkAs(h, 'd1', PHONE)
  assert.equal((await h.storage.get<{ phone: string }>('session:d1'))?.phone, PHONE)
  await h.transport.stop()
  const restarted = await memoryHarness({ network: new MemoryNetwork() })
  await restarted.storage.set('session:d1', await h.storage.get('session:d1'))
  assert.deepEqual(await restarted.transport.status('d1'), { state: 'closed', connected: false, phone: PHONE })
  await restarted.transport.connect('d1')
  assert.equal((await restarted.transport.status('d1')).state, 'open')
  await restarted.transport.send('d1', FRIEND, { kind: 'text', text: 'hi' })
  assert.equal(restarted.network.inbox(FRIEND).length, 1)
  await h.transport.logout('d1')
  assert.equal(await h.storage.get('session:d1'), undefined)
  await restarted.close()
})

sessions('the phone unlinking the device closes it as logged-out and deletes its session', async () => {
  const h = await memoryHarness()
  await linkAs(h, 'd1', PHONE)
  assert.equal(await h.network.unlink('d1'), true)
  assert.deepEqual(h.events.at(-1), { type: 'status', deviceId: 'd1', status: { state: 'logged-out', connected: false, reason: 'unlinked from the phone' } })
  assert.equal(await h.storage.get('session:d1'), undefined)
  await h.transport.connect('d1')
  assert.equal((await h.transport.status('d1')).connected, false)
  assert.equal(await h.network.unlink('d1'), false)
  await h.close()
})

sessions('a device unlinked while offline reports logged-out when it connects', async () => {
  const h = await memoryHarness()
  await linkAs(h, 'd1', PHONE)
  await h.transport.disconnect('d1')
  await h.network.unlink('d1')
  await h.transport.connect('d1')
  assert.equal((await h.transport.status('d1')).state, 'logged-out')
  assert.equal(await h.storage.get('session:d1'), undefined)
  await h.close()
})

sessions('a device opened by another transport is replaced on the first one', async () => {
  const a = await memoryHarness()
  await linkAs(a, 'd1', PHONE)
  const b = await memoryHarness({ network: a.network })
  await b.storage.set('session:d1', await a.storage.get('session:d1'))
  await b.transport.connect('d1')
  await until(async () => (await a.transport.status('d1')).state === 'replaced', 'the first session to be replaced')
  assert.equal((await b.transport.status('d1')).state, 'open')
  await assert.rejects(a.transport.send('d1', FRIEND, { kind: 'text', text: 'x' }), code('not-connected'))
  await a.close()
  await b.close()
})

sessions('messages that arrive while the device is offline are delivered when it reconnects', async () => {
  const h = await memoryHarness()
  await linkAs(h, 'd1', PHONE)
  await h.transport.disconnect('d1')
  const id = await h.network.sendFromPhone(FRIEND, PHONE, { type: 'text', text: 'while you were away' })
  assert.ok(!h.events.some(e => e.type === 'message'))
  await h.transport.connect('d1')
  const kinds = h.events.slice(-2).map(e => e.type)
  assert.deepEqual(kinds, ['status', 'message'], 'open first, then the queued message')
  assert.ok(h.events.some(e => e.type === 'message' && e.message.id === id))
  await h.close()
})

const faults = suite('transport-memory: injected faults')

faults('fail, rate-limit and timeout faults throw their TransportError until cleared', async () => {
  const h = await memoryHarness()
  await linkAs(h, 'd1', PHONE)
  const send = () => h.transport.send('d1', FRIEND, { kind: 'text', text: 'x' })
  h.network.setFault('d1', 'fail')
  await assert.rejects(send(), code('failed'))
  h.network.setFault(PHONE, 'rate-limit')
  await assert.rejects(send(), code('failed'), 'the device fault wins while set')
  h.network.setFault('d1', null)
  await assert.rejects(send(), code('rate-limited'), 'a fault on the phone applies to its devices')
  h.network.setFault(PHONE, 'timeout')
  await assert.rejects(h.transport.groupCreate('d1', 'G', []), code('timeout'))
  h.network.setFault(PHONE, null)
  assert.ok((await send()).id)
  await h.close()
})

faults('a hang holds the send until the fault is cleared', async () => {
  const h = await memoryHarness()
  await linkAs(h, 'd1', PHONE)
  h.network.setFault('d1', 'hang')
  let settled = false
  const pending = h.transport.send('d1', FRIEND, { kind: 'text', text: 'slow' }).finally(() => (settled = true))
  await until(() => h.network.faults.hanging === 1, 'the send to hang')
  await sleep(5)
  assert.equal(settled, false)
  h.network.setFault('d1', null)
  assert.ok((await pending).id)
  assert.equal(h.network.inbox(FRIEND).length, 1)
  await h.close()
})

faults('a hanging send fails with not-connected when the device disconnects', async () => {
  const h = await memoryHarness()
  await linkAs(h, 'd1', PHONE)
  h.network.setFault('d1', 'hang')
  const pending = h.transport.send('d1', FRIEND, { kind: 'text', text: 'never' })
  await until(() => h.network.faults.hanging === 1, 'the send to hang')
  await h.transport.disconnect('d1')
  await assert.rejects(pending, code('not-connected'))
  assert.equal(h.network.faults.hanging, 0)
  await h.close()
})

sessions.run()
faults.run()
