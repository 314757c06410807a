import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import Koa from 'koa'
import type { DeviceLeases } from '../../../src/domain/cluster/device-leases.ts'
import type { Instances } from '../../../src/domain/instances.ts'
import { relayMediaToHolder } from '../../../src/http/forwarding/media-relay.ts'
import { request } from '../../helpers/http.ts'

/** A holder answering every media request with `status` and `headers`, and a relaying instance in front of it. */
async function relayTo(status: number, headers: Record<string, string>) {
  const holder = createServer((_req, res) => res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end('{"status":503}'))
  await new Promise<void>(resolve => holder.listen(0, '127.0.0.1', resolve))
  const holderUrl = `http://127.0.0.1:${(holder.address() as AddressInfo).port}`
  const leases = { me: 'relay', holder: async () => 'holder' } as unknown as DeviceLeases
  const instances = { id: 'relay', recordOf: async () => ({ url: holderUrl }) } as unknown as Instances
  const app = new Koa()
  app.use(async ctx => void (await relayMediaToHolder(ctx, 'token', 'device', leases, instances)))
  const relay = app.listen(0, '127.0.0.1')
  await new Promise(resolve => relay.once('listening', resolve))
  const url = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`
  return { url, stop: () => (relay.close(), holder.close(), relay.closeAllConnections(), holder.closeAllConnections()) }
}

test("a holder's 503 with Retry-After (draining, shutting down) reaches the client with its Retry-After", async () => {
  // Before: the relay kept the holder's status and body but not Retry-After, which every 503 of the gateway carries (docs/scaling.md).
  const relay = await relayTo(503, { 'retry-after': '7' })
  try {
    const answer = await request(`${relay.url}/media/token`)
    assert.is(answer.status, 503)
    assert.is(answer.headers.get('retry-after'), '7')
  } finally {
    relay.stop()
  }
})

test.run()
