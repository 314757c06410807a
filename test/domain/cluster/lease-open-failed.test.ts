import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { baileysTransport } from '../../../adapters/transport-baileys/index.ts'
import type { Storage } from '../../../src/ports/storage.ts'
import { FakeBaileys } from '../../helpers/fake-baileys/index.ts'
import { inProcessCluster, registerAt } from '../../helpers/cluster-in-process.ts'
import { post } from '../../helpers/http.ts'
import { waitFor } from '../../helpers/gateway.ts'

/**
 * An instance that takes a device's lease and cannot open its session (the transport's store read
 * failed) does not keep the lease as if the session were open here: it hands it back. Before, it kept
 * it, and operation 6 on a linked device nobody held logged out a session this process never opened:
 * Baileys deleted the credentials without unlinking (the phone kept listing the device).
 */

/** `storage` whose next read of a device's Baileys credentials fails once `failNextCredsRead` is called. */
function credsReadFailingOnce(storage: Storage) {
  let armed = false
  let failed = 0
  const wrapped = new Proxy(storage, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (name !== 'get' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value
      return async (key: string, ...rest: unknown[]) => {
        if (armed && key.endsWith(':auth:creds')) {
          armed = false
          failed++
          throw new Error('simulated store read failure')
        }
        return value.apply(target, [key, ...rest])
      }
    },
  })
  return { storage: wrapped, failNextCredsRead: () => void (armed = true), failed: () => failed }
}

test('operation 6 on a linked device nobody holds, whose first session open here fails, unlinks it through an open session', async () => {
  const fakes = [new FakeBaileys(), new FakeBaileys()]
  const stores: ReturnType<typeof credsReadFailingOnce>[] = []
  // Heartbeats far apart: the request, not a heartbeat, finds the session it failed to open.
  const members = await inProcessCluster(2, (index, storage) => ({
    storage: (stores[index] = credsReadFailingOnce(storage)).storage,
    transport: baileysTransport({ ...fakes[index]!.transportOptions(), reconnect: { initialDelayMs: 5, maxDelayMs: 40, jitter: 0 } }),
    instances: { heartbeatMs: 60_000, ttlMs: 120_000 },
  }))
  try {
    const authkey = await registerAt(members[0]!.url, 'open-failed@example.com')
    const added = await post(`${members[0]!.url}/api/v2/qrcode`, { authkey, setAppkey: 'loja' })
    assert.is(added.status, 200, added.text)
    const id: string = added.body.id
    await waitFor(() => members.some(m => m.holds(id)), 5_000, 'one instance holds the device being linked')
    const h = members.findIndex(m => m.holds(id))
    const o = 1 - h
    await fakes[h]!.completeLink(id, '5511999990000')
    const check = { authkey, message: 'loja', checkDispositivo: 'true' }
    await waitFor(async () => (await post(`${members[o]!.url}/api/developer`, check)).body?.dispositivo?.conectado === true, 5_000, 'connected')

    // The holder leaves (its lease handed back); the other instance's first open of the session fails.
    stores[o]!.failNextCredsRead()
    const other = members[o]!
    await members[h]!.stop()
    members.splice(h, 1)

    const deleted = await post(`${other.url}/api/developer`, { authkey, message: 'loja', apagarDispositivo: 'true' })
    assert.is(stores[o]!.failed(), 1, 'the first open of the session here failed')
    assert.is(deleted.status, 200, `the open is tried again once its lease was handed back: ${deleted.text}`)
    assert.ok(
      fakes[o]!.socketsOf(id).some(socket => socket.calls.some(c => c.method === 'logout')),
      'WhatsApp heard of the logout, through a session opened here (the phone drops the device)',
    )
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test.run()
