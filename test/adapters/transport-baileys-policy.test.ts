import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { TransportError } from '../../src/ports/transport.ts'
import { RecordingStorage } from '../helpers/recording-storage.ts'
import { setupBaileys, type SetupOptions } from '../helpers/baileys-setup.ts'
import { settle, waitFor, type FakeBaileys } from '../helpers/fake-baileys/index.ts'

const policy = suite('Baileys transport: connection policy by DisconnectReason')

async function openDevice(options: SetupOptions = {}) {
  const storage = new RecordingStorage()
  const s = await setupBaileys({ storage, ...options })
  await s.linked('dev', '5511999990000', '123456789@lid')
  return { ...s, storage }
}

const last = (s: { statuses(id: string): { state: string; reason?: string }[] }) => s.statuses('dev').at(-1)

policy('515 restart required: a new socket with the same auth at once, no back-off', async () => {
  const s = await setupBaileys({ reconnect: { initialDelayMs: 60_000 } })
  await s.transport.link('dev', {})
  const linking = s.fake.current('dev')
  const restarted = await s.fake.completeLink('dev', '5511999990000')
  assert.is(s.fake.socketsOf('dev').length, 2)
  assert.is(restarted.config.auth.creds, linking.config.auth.creds, 'same creds object')
  assert.ok(restarted.createdAt - linking.createdAt < 20_000, 'not after the 60 s back-off')
  await waitFor(() => last(s)?.state === 'open', 'open')
  await s.transport.stop()
})

policy('401 logged out: auth wiped, status logged-out, no reconnect', async () => {
  const s = await openDevice()
  const sockets = s.fake.sockets.length
  await s.fake.current('dev').close(401)
  await waitFor(() => last(s)?.state === 'logged-out', 'logged-out')
  assert.equal(last(s), { state: 'logged-out', connected: false, reason: 'logged out from the phone' })
  assert.equal(s.storage.keys('device:dev:auth:'), [])
  await settle(30)
  assert.is(s.fake.sockets.length, sockets)
  await s.transport.connect('dev')
  await settle()
  assert.is(s.fake.sockets.length, sockets, 'nothing left to resume')
  await s.transport.stop()
})

policy('401 with a store that fails the deletes: still logged-out; a clear deletes a few keys at a time, never all at once', async () => {
  // Found on the real stack: ~850 keys deleted at once on SQLite outlived the store's time-out, and logged-out was never reported.
  const flight = { now: 0, most: 0, failing: false }
  const storage = new (class extends RecordingStorage {
    override async delete(key: string): Promise<boolean> {
      if (!key.startsWith('device:dev:auth:')) return super.delete(key)
      flight.most = Math.max(flight.most, ++flight.now)
      await settle(1)
      flight.now--
      if (flight.failing) throw new Error('the store did not answer in time')
      return super.delete(key)
    }
  })()
  const s = await setupBaileys({ storage })
  await s.linked('dev', '5511999990000', '123456789@lid')
  for (let i = 0; i < 40; i++) await storage.set(`device:dev:auth:key:pre-key:${i}`, '{}')
  flight.failing = true
  await s.fake.current('dev').close(401)
  await waitFor(() => last(s)?.state === 'logged-out', 'logged-out')
  assert.ok(flight.most > 1 && flight.most <= 8, `at most 8 deletes at a time (${flight.most})`)
  await s.transport.stop()
})

policy('440 connection replaced: status replaced with the reason, credentials kept, no reconnect by itself; connect() opens it again', async () => {
  const s = await openDevice()
  const sockets = s.fake.sockets.length
  await s.fake.current('dev').replaced()
  await waitFor(() => last(s)?.state === 'replaced', 'replaced')
  assert.equal(last(s), {
    state: 'replaced',
    connected: false,
    phone: '5511999990000',
    lid: '123456789@lid',
    reason: 'session replaced by another client (440)',
  })
  await new Promise(resolve => setTimeout(resolve, 100)) // far past the back-off (5 ms): nothing reconnects
  assert.is(s.fake.sockets.length, sockets)
  assert.ok(s.storage.keys('device:dev:auth:creds').length === 1, 'the credentials stay')
  await s.transport.connect('dev')
  await waitFor(() => last(s)?.state === 'open', 'open again on an explicit connect')
  assert.is(s.fake.sockets.length, sockets + 1)
  assert.equal(s.fake.current('dev').config.auth.creds.me?.id, '5511999990000:7@s.whatsapp.net', 'with the same credentials')
  await s.transport.stop()
})

for (const code of [402, 403, 406]) {
  policy(`${code}: stop and report why, keeping the credentials`, async () => {
    const s = await openDevice()
    const sockets = s.fake.sockets.length
    await s.fake.current('dev').close(code)
    await waitFor(() => last(s)?.state === 'closed', 'closed')
    assert.match(last(s)?.reason ?? '', `(${code})`)
    await settle(30)
    assert.is(s.fake.sockets.length, sockets)
    assert.is(s.storage.keys('device:dev:auth:creds').length, 1)
    await s.transport.stop()
  })
}

policy('408 while paired (keep-alive lost): reconnect', async () => {
  const s = await openDevice()
  const sockets = s.fake.sockets.length
  await s.fake.current('dev').close(408)
  await waitFor(() => s.fake.sockets.length === sockets + 1, 'a new socket')
  await waitFor(() => last(s)?.state === 'open', 'open again')
  const states = s.statuses('dev').slice(-2)
  assert.is(states[0].state, 'connecting')
  assert.match(states[0].reason ?? '', /^connection lost \(408\); reconnecting in/)
  await s.transport.stop()
})

policy('408 "QR refs attempts ended" (QR codes ran out): the link ends, status closed, no reconnect', async () => {
  const s = await setupBaileys()
  await s.transport.link('dev', {})
  await s.fake.current('dev').expireQr()
  await waitFor(() => last(s)?.state === 'closed', 'closed')
  assert.equal(last(s), { state: 'closed', connected: false, reason: 'link expired: the QR was not scanned in time' })
  await settle(30)
  assert.is(s.fake.sockets.length, 1)
  await s.transport.stop()
})

policy('transient closes (428, 500, 503) reconnect with exponential back-off', async () => {
  const s = await openDevice({ reconnect: { initialDelayMs: 40, factor: 2, maxDelayMs: 1_000, jitter: 0 }, behaviour: { autoOpen: false } })
  s.fake.current('dev').open()
  await settle()
  const times: number[] = []
  for (const code of [428, 500, 503]) {
    const closedAt = Date.now()
    const count = s.fake.sockets.length
    await s.fake.current('dev').close(code)
    await waitFor(() => s.fake.sockets.length === count + 1, `reconnect after ${code}`)
    times.push(s.fake.current('dev').createdAt - closedAt)
  }
  assert.ok(times[0] >= 35, `first delay ${times[0]}`)
  assert.ok(times[1] >= 75, `second delay ${times[1]}`)
  assert.ok(times[2] >= 155, `third delay ${times[2]}`)
  assert.match(last(s)?.reason ?? '', /service unavailable \(503\); reconnecting in/)
  await s.transport.stop()
})

policy('a close without a status code that we did not cause (plain Error) reconnects', async () => {
  const s = await openDevice()
  const sockets = s.fake.sockets.length
  await s.fake.current('dev').close(new Error('socket hang up'))
  await waitFor(() => s.fake.sockets.length === sockets + 1, 'a new socket')
  await waitFor(() => last(s)?.state === 'open', 'open')
  await s.transport.stop()
})

policy('405 (outdated version): the version is resolved again before reconnecting', async () => {
  let calls = 0
  const s = await openDevice({ resolveVersion: async () => [2, 3000, ++calls] })
  assert.is(calls, 1)
  const sockets = s.fake.sockets.length
  await s.fake.current('dev').close(405)
  await waitFor(() => s.fake.sockets.length === sockets + 1, 'a new socket')
  assert.is(calls, 2)
  assert.equal(s.fake.current('dev').config.version, [2, 3000, 2])
  await s.transport.stop()
})

policy('our own end(undefined) (disconnect) never reconnects', async () => {
  const s = await openDevice()
  const socket = s.fake.current('dev')
  const sockets = s.fake.sockets.length
  await s.transport.disconnect('dev')
  assert.ok(socket.closed)
  assert.is(socket.endedWith, undefined)
  assert.equal(last(s), { state: 'closed', connected: false, phone: '5511999990000', lid: '123456789@lid', reason: 'disconnected' })
  await settle(30)
  assert.is(s.fake.sockets.length, sockets)
  await s.transport.connect('dev')
  await waitFor(() => last(s)?.state === 'open', 'resumed')
  await s.transport.stop()
})

policy('stop() ends every socket without reconnecting or reporting', async () => {
  const s = await openDevice()
  await s.linked('other', '5511777770000')
  const sockets = s.fake.sockets.length
  const events = s.events.length
  await s.transport.stop()
  assert.ok(s.fake.current('dev').closed && s.fake.current('other').closed)
  await settle(30)
  assert.is(s.fake.sockets.length, sockets)
  assert.is(s.events.length, events)
})

policy('every reconnect is a new factory call, and the old socket loses our listeners', async () => {
  const s = await openDevice()
  const old = s.fake.current('dev')
  await old.close(500)
  await waitFor(() => s.fake.current('dev') !== old, 'a new socket')
  for (const event of ['connection.update', 'creds.update', 'messages.upsert']) assert.is(old.ev.listenerCount(event), 0, event)
  assert.is(s.fake.current('dev').ev.listenerCount('messages.upsert'), 1)
  await s.transport.stop()
})

policy('the back-off resets after a stable connection and never loops tightly', async () => {
  const s = await openDevice({ reconnect: { initialDelayMs: 30, factor: 4, maxDelayMs: 1_000, jitter: 0, stableAfterMs: 50 } })
  const close = async () => {
    const count = s.fake.sockets.length
    const at = Date.now()
    await s.fake.current('dev').close(500)
    await waitFor(() => s.fake.sockets.length === count + 1, 'reconnect')
    await waitFor(() => last(s)?.state === 'open', 'open')
    return s.fake.current('dev').createdAt - at
  }
  const first = await close()
  const second = await close() // immediately after: the delay grows
  await new Promise(resolve => setTimeout(resolve, 60)) // stable for longer than stableAfterMs
  const third = await close()
  assert.ok(first >= 25, `first ${first}`)
  assert.ok(second >= 110 && second > first, `second ${second} after first ${first}`)
  assert.ok(third < second, `third ${third} back at the initial delay (second ${second})`)
  await s.transport.stop()
})

policy('an unpaired socket closing transiently shows a new QR (as a qr event), at most three times', async () => {
  const s = await setupBaileys()
  await s.transport.link('dev', {})
  await s.fake.current('dev').close(500)
  await waitFor(() => s.fake.sockets.length === 2 && s.qrs('dev').length === 1, 'a new QR')
  assert.is(s.qrs('dev')[0], s.fake.current('dev').qrs[0])
  assert.is(last(s)?.state, 'linking')
  for (let retry = 2; retry <= 3; retry++) {
    const count = s.fake.sockets.length
    await s.fake.current('dev').close(500)
    await waitFor(() => s.fake.sockets.length === count + 1, `retry ${retry}`)
  }
  await s.fake.current('dev').close(500)
  await waitFor(() => last(s)?.state === 'closed', 'closed')
  await settle(30)
  assert.is(s.fake.sockets.length, 4)
  assert.match(last(s)?.reason ?? '', /^link interrupted/)
  await s.transport.stop()
})

policy('a socket factory that throws is retried with back-off', async () => {
  let fake: FakeBaileys | undefined
  let failures = 0
  const s = await setupBaileys({
    socketFactory: (config, info) => {
      if (failures > 0) {
        failures--
        throw new Error('no socket today')
      }
      return fake!.factory(config, info)
    },
  })
  fake = s.fake
  await s.linked('dev', '5511999990000')
  failures = 2
  const count = s.fake.sockets.length
  await s.fake.current('dev').close(500)
  await waitFor(() => s.fake.sockets.length === count + 1, 'a socket after two failed attempts')
  assert.is(failures, 0)
  await waitFor(() => last(s)?.state === 'open', 'open')
  await s.transport.stop()
})

policy('sends while reconnecting fail with not-connected', async () => {
  const s = await openDevice({ reconnect: { initialDelayMs: 200, jitter: 0 } })
  await s.fake.current('dev').close(500)
  await waitFor(() => last(s)?.state === 'connecting', 'connecting')
  try {
    await s.transport.send('dev', '5511888880000', { kind: 'text', text: 'x' })
    assert.unreachable()
  } catch (error) {
    assert.instance(error, TransportError)
    assert.is((error as TransportError).code, 'not-connected')
  }
  await s.transport.stop()
})

policy.run()
