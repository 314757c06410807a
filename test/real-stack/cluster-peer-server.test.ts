import { connect, type Socket } from 'node:net'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { waPeerServer, type WaPeerServer } from '../../adapters/wa-peer/index.ts'
import { post, request } from '../helpers/http.ts'

/**
 * What the peer server (`npm run wa-peer`) offers gateways and tests in other processes, which the
 * cluster case on the real stack (cluster.test.ts) relies on: a gateway process that dies is seen
 * gone, and what only the peer sees (a phone's linked devices, its problems) is served over HTTP.
 */
const server = suite<{ peer: WaPeerServer }>('the WhatsApp peer server for several gateway processes')

server.before.each(async world => {
  world.peer = await waPeerServer()
})

server.after.each(async world => {
  await world.peer.close()
})

server('a client that goes away without a close frame (its process killed: only a FIN) is seen gone: the peer closes its side', async ({ peer }) => {
  const { hostname, port } = new URL(peer.url)
  const client = connect(Number(port), hostname)
  const upgraded = new Promise<string>(resolve => client.once('data', chunk => resolve(chunk.toString('latin1'))))
  client.write(
    'GET /ws/chat HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
  )
  assert.match(await upgraded, /^HTTP\/1\.1 101/)
  assert.is(peer.peer.stats.upgrades, 1)
  const ended = endOf(client)
  client.end() // FIN, as the kernel sends for a process killed with SIGKILL
  assert.is(await Promise.race([ended, new Promise(resolve => setTimeout(() => resolve('still open after 3 s'), 3_000))]), 'ended')
  client.destroy()
})

server(
  "GET /_peer/devices/:phone: the phone's linked devices (404 for no phone of the peer); GET /_peer/records: problems and unknown iqs",
  async ({ peer }) => {
    const unknown = await request(`${peer.url}/_peer/devices/5511900000001`)
    assert.equal([unknown.status, unknown.body.message], [404, '5511900000001 is not a phone of this peer'])
    assert.is((await post(`${peer.url}/_sim/phones`, { phone: '5511900000001', pushName: 'Ana' })).status, 200)
    const none = await request(`${peer.url}/_peer/devices/+55 11 90000-0001`)
    assert.equal([none.status, none.body], [200, []])
    peer.peer.records.problems.push('a problem the peer saw')
    peer.peer.records.unknownIqs.push({ tag: 'iq', attrs: { xmlns: 'w:sync:app:state', type: 'set', id: '1' }, content: [{ tag: 'sync', attrs: {} }] })
    const records = await request(`${peer.url}/_peer/records`)
    assert.equal(records.body, { problems: ['a problem the peer saw'], unknownIqs: ['w:sync:app:state/set/sync'] })
  },
)

server.run()

/** Resolves with 'ended' once the server half-closed or closed the connection. */
function endOf(socket: Socket): Promise<string> {
  return new Promise(resolve => {
    socket.once('end', () => resolve('ended'))
    socket.once('close', () => resolve('ended'))
  })
}
