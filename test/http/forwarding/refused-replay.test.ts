import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import { signedHeaders } from '../../../src/http/forwarding/signature.ts'
import { inProcessCluster, linkedDeviceInCluster } from '../../helpers/cluster-in-process.ts'
import { openSocket } from '../../helpers/raw-http.ts'
import { request } from '../../helpers/http.ts'
import { waitFor } from '../../helpers/gateway.ts'

/**
 * docs/scaling.md, "Replays": a forward the holder refused before reading its body (its media budget
 * full: 429, which the forwarder relays, so the client sends again) is never run when an eavesdropper
 * plays its bytes again once the budget is free: the holder remembered its signature all the same.
 */

const FRIEND = '5511988887777'
const SECRET = 'a cluster secret of enough length' // inProcessCluster's

test('a signed forward refused 429 by the media budget, played again once the budget is free, is refused 403 and never sent', async () => {
  const network = new MemoryNetwork()
  const members = await inProcessCluster(2, () => ({
    transport: memoryTransport({ network }),
    mediaBytesInFlight: 100_000,
    instances: { heartbeatMs: 60_000, ttlMs: 120_000 },
  }))
  try {
    const { authkey, holder, other } = await linkedDeviceInCluster(members, network, 'refused-replay@example.com')
    // A send of 70 kB (JSON with trailing spaces): it holds its size of the holder's media budget.
    const body = Buffer.from(JSON.stringify({ authkey, appkey: 'loja', to: FRIEND, message: 'uma vez' }) + ' '.repeat(70_000))
    const forward = {
      'content-type': 'application/json',
      ...signedHeaders(SECRET, { method: 'POST', path: '/api/create-message', timestamp: Date.now(), nonce: 'n-1', from: other.id, to: holder.id, body }),
    }
    const filler = { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.alloc(70_000, 0x20) }
    // Another request's 90 kB, whose body never comes, holds most of the budget.
    const slow = await openSocket(holder.url)
    slow.write('POST /api/create-message HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 90000\r\n\r\n{')
    await waitFor(async () => (await request(`${holder.url}/api/create-message`, filler)).status === 429)
    const refused = await request(`${holder.url}/api/create-message`, { method: 'POST', headers: forward, body })
    assert.is(refused.status, 429, refused.text)
    assert.equal(network.inbox(FRIEND), [])

    slow.end(`${' '.repeat(89_998)}}`) // its body at last: answered, its hold given back
    await waitFor(async () => (await request(`${holder.url}/api/create-message`, filler)).status !== 429)
    const replayed = await request(`${holder.url}/api/create-message`, { method: 'POST', headers: forward, body })
    assert.is(replayed.status, 403, replayed.text)
    assert.equal(network.inbox(FRIEND), [], 'the refused forward was not sent when played again')

    // The client, told 429, sends again: its text goes out once.
    const again = await request(`${other.url}/api/create-message`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    assert.is(again.status, 200, again.text)
    assert.is(network.inbox(FRIEND).length, 1)
  } finally {
    for (const member of members) await member.stop().catch(() => {})
  }
})

test.run()
