import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { baileysTransport } from '../../adapters/transport-baileys/index.ts'
import { FakeBaileys } from '../helpers/fake-baileys/index.ts'
import { inProcessCluster, pausableStorage, registerAt } from '../helpers/cluster-in-process.ts'
import { post } from '../helpers/http.ts'
import { waitFor } from '../helpers/gateway.ts'

const HEARTBEAT_MS = 250
const TTL_MS = 2000

/** Two cluster instances on one store, each with the Baileys transport on its own fake WhatsApp. */
async function start() {
  const fakes = [new FakeBaileys(), new FakeBaileys()]
  const stores: ReturnType<typeof pausableStorage>[] = []
  const members = await inProcessCluster(2, (index, storage) => ({
    storage: (stores[index] = pausableStorage(storage)).storage,
    transport: baileysTransport({ ...fakes[index]!.transportOptions(), reconnect: { initialDelayMs: 5, maxDelayMs: 40, jitter: 0 } }),
    instances: { heartbeatMs: HEARTBEAT_MS, ttlMs: TTL_MS },
  }))
  return { fakes, members, stores }
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

test('Baileys under leases: only the holder opens a device socket; a holder that stalls past the lease time closes it, the other instance resumes the device without a scan, and the former holder never reopens it', async () => {
  const { fakes, members, stores } = await start()
  try {
    const authkey = await registerAt(members[0]!.url, 'leases@example.com')
    const added = await post(`${members[0]!.url}/api/v2/qrcode`, { authkey, setAppkey: 'loja' })
    assert.is(added.status, 200, added.text)
    const id: string = added.body.id
    await waitFor(() => members.some(m => m.holds(id)), 5_000, 'one instance holds the device being linked')
    const h = members.findIndex(m => m.holds(id))
    const o = 1 - h
    const [holderFake, otherFake] = [fakes[h]!, fakes[o]!]
    await holderFake.completeLink(id, '5511999990000')
    const connected = async (at: string) =>
      (await post(`${at}/api/developer`, { authkey, message: 'loja', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true
    await waitFor(() => connected(members[o]!.url), 5_000, 'connected, as seen through the other instance')

    // Several heartbeats later the other instance has opened nothing for the device; a send through it goes to the holder.
    await sleep(5 * HEARTBEAT_MS)
    assert.is(otherFake.socketsOf(id).length, 0, 'no socket on the instance that does not hold the device')
    const sent = await post(`${members[o]!.url}/api/create-message`, { authkey, appkey: added.body.appkey, to: '5511888880000', message: 'Olá' })
    assert.is(sent.status, 200, sent.text)
    assert.is(holderFake.sent(id).length, 1, 'the holder sent it')

    // The holder's store stalls past the time-to-live (as for a paused process): it closes the session
    // itself, the other instance takes the device over and resumes it with the stored credentials.
    const before = holderFake.socketsOf(id).length
    stores[h]!.pause()
    await waitFor(() => members[o]!.holds(id), 10_000, 'the other instance takes the device over')
    await waitFor(() => otherFake.socketsOf(id).some(s => s.opened), 10_000, 'its socket opens without a scan')
    assert.ok(
      holderFake.current(id).calls.some(c => c.method === 'end'),
      'the paused holder closed its socket',
    )
    stores[h]!.resume()
    await waitFor(() => connected(members[h]!.url), 5_000, 'connected, as seen through the former holder')
    // Back, the former holder sees the lease is no longer its own and never reopens: no fight.
    const total = holderFake.socketsOf(id).length + otherFake.socketsOf(id).length
    await sleep(8 * HEARTBEAT_MS)
    assert.is(holderFake.socketsOf(id).length, before, 'the former holder opened no new socket')
    assert.is(holderFake.socketsOf(id).length + otherFake.socketsOf(id).length, total, 'no socket opened since the takeover')
    assert.ok(!members[h]!.holds(id) && members[o]!.holds(id))
    assert.is(
      fakes.flatMap(f => f.socketsOf(id)).filter(s => s.opened && !s.calls.some(c => c.method === 'end')).length,
      1,
      'exactly one open socket for the device',
    )
    const again = await post(`${members[h]!.url}/api/create-message`, { authkey, appkey: added.body.appkey, to: '5511888880000', message: 'De novo' })
    assert.is(again.status, 200, again.text)
    assert.is(otherFake.sent(id).length, 1, 'the new holder sent it')
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test.run()
