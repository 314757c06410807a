import { test } from 'uvu'
import { Readable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import { internalsOf } from '../../../src/internals.ts'
import type { MediaPayload, ReceivedMedia } from '../../../src/ports/transport.ts'
import { MEDIA_RELAY_HEADER } from '../../../src/http/forwarding/media-relay.ts'
import { inProcessCluster, linkedDeviceInCluster, registerAt } from '../../helpers/cluster-in-process.ts'
import { post, request } from '../../helpers/http.ts'
import { startReceiver } from '../../helpers/receiver.ts'
import { waitFor } from '../../helpers/gateway.ts'

/** Two gateways of one cluster on one simulated network; only the holder of a device can fetch its media (as with Baileys). */
async function twoInstances() {
  const network = new MemoryNetwork()
  const bytes = Buffer.from('%PDF-1.7 relayed document '.repeat(2000))
  const instances = await inProcessCluster(2, () => ({ transport: memoryTransport({ network }) }))
  for (const instance of instances) {
    const internals = internalsOf(instance.gateway) as { transport: { downloadMedia?: unknown } }
    internals.transport.downloadMedia = async (deviceId: string): Promise<MediaPayload | undefined> =>
      instance.holds(deviceId) ? { data: bytes, mimetype: 'application/pdf', fileName: 'contrato.pdf' } : undefined
  }
  return { network, bytes, instances }
}

test('a media link works through any instance of a cluster: the holder of the device fetches the bytes', async () => {
  const receiver = await startReceiver()
  const { network, bytes, instances } = await twoInstances()
  try {
    const [a] = instances
    const authkey = await registerAt(a!.url, 'relay@example.com')
    const added = await post(`${a!.url}/api/v2/qrcode`, { authkey, setAppkey: 'docs', webhook: receiver.url })
    assert.is(added.status, 200, added.text)
    await network.scan({ deviceId: added.body.id }, '5511944443333')
    await waitFor(
      async () => (await post(`${a!.url}/api/developer`, { authkey, message: 'docs', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true,
    )
    await network.sendFromPhone('5511900001111', '5511944443333', { type: 'document', fileName: 'contrato.pdf', mimetype: 'application/pdf' })
    await receiver.waitForHooks(1)
    const event = receiver.verified(added.body.webhookSecret)[0]
    const token = String(event.url).split('/media/')[1]
    assert.ok(token, event.url)

    const holder = instances.find(i => i.holds(added.body.id))!
    const other = instances.find(i => i !== holder)!
    for (const instance of [holder, other]) {
      const download = await fetch(`${instance.url}/media/${token}`)
      assert.is(download.status, 200, instance === holder ? 'holder' : 'other instance')
      assert.is(download.headers.get('content-type'), 'application/pdf')
      assert.match(download.headers.get('content-disposition') ?? '', /contrato\.pdf/)
      assert.is(download.headers.get('x-content-type-options'), 'nosniff')
      assert.ok(Buffer.from(await download.arrayBuffer()).equals(bytes))
    }
    // A relayed request is answered where it lands, never relayed again: the other instance has no session.
    const relayed = await request(`${other.url}/media/${token}`, { headers: { [MEDIA_RELAY_HEADER]: 'someone' } })
    assert.is(relayed.status, 404)
    // A bad token is refused before any relay.
    assert.is((await request(`${other.url}/media/${token.slice(0, -3)}xyz`)).status, 404)

    // The holder unreachable while its lease still names it: 503 with Retry-After, for the client to try again.
    await holder.closeServer()
    const unreachable = await request(`${other.url}/media/${token}`)
    assert.is(unreachable.status, 503)
    assert.ok(unreachable.headers.get('retry-after'))
  } finally {
    for (const instance of instances) await instance.stop().catch(() => {})
    await receiver.stop()
  }
})

test("a relayed download takes as long as the holder's bytes keep coming: the relay's wait bounds the holder's answer, never the whole download", async () => {
  const { network, instances } = await twoInstances()
  const timeout = AbortSignal.timeout
  try {
    const { deviceId, holder, other } = await linkedDeviceInCluster(instances, network, 'relay-long@example.com', '5511944443338')
    // The relay's wait for the holder (120 s) made short: a download longer than it, bytes coming all along.
    AbortSignal.timeout = () => timeout(300)
    const chunks = Array.from({ length: 8 }, (_, i) => Buffer.from(`part ${i} `.repeat(100)))
    const { transport, mediaLinks } = internalsOf(holder.gateway) as unknown as {
      transport: { downloadMedia?: unknown }
      mediaLinks: { sign(target: { deviceId: string; message: { id: string } }): Promise<string> }
    }
    transport.downloadMedia = async (_deviceId: string, target: { id: string }): Promise<ReceivedMedia> => {
      if (target.id === 'SLOW-START') await sleep(1000) // the holder answers nothing within the wait: 503
      return {
        data: Readable.from(
          (async function* () {
            for (const [i, chunk] of chunks.entries()) {
              if (i > 0) await sleep(150)
              yield chunk
            }
          })(),
        ),
        mimetype: 'application/pdf',
      }
    }
    const long = await fetch(`${other.url}/media/${await mediaLinks.sign({ deviceId, message: { id: 'LONG' } })}`)
    assert.is(long.status, 200)
    const body = await long.arrayBuffer().then(
      data => Buffer.from(data),
      (err: Error) => err,
    )
    assert.ok(Buffer.isBuffer(body), `the whole file, not a cut connection: ${body}`)
    assert.ok(body.equals(Buffer.concat(chunks)))
    const late = await request(`${other.url}/media/${await mediaLinks.sign({ deviceId, message: { id: 'SLOW-START' } })}`)
    assert.is(late.status, 503, 'a holder that does not answer within the wait: try again')
  } finally {
    AbortSignal.timeout = timeout
    for (const instance of instances) await instance.stop().catch(() => {})
  }
})

test.run()
