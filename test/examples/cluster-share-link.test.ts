import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startCluster, registerAccount } from '../helpers/cluster.ts'
import { needing, REDIS } from '../helpers/requires.ts'
import { request } from '../helpers/http.ts'

/**
 * A QR share link is a capability another instance may be asked for at once (a load balancer in
 * front of the cluster): each instance a process of its own on one Redis. An instance that had the
 * device cached (it served the page of an earlier link) must still show a link made on another
 * instance just now, before its cache epoch poll (every 100 ms) drops that device.
 */
const test = suite('cluster mode: a new QR share link opens on every instance at once')

needing(
  test,
  REDIS,
  'the share link cluster test',
)('a link made through one instance is shown by both right away, also by the one with the device cached', async () => {
  const cluster = await startCluster(REDIS.value!, 2)
  try {
    const authkey = await registerAccount(cluster)
    const created = await cluster.call(0, '/api/v2/qrcode', { authkey, setAppkey: 'loja' })
    assert.is(created.status, 200, created.text)
    let token = created.body.link.split('/qr/')[1]
    const statuses: string[] = []
    for (let round = 0; round < 4; round++) {
      // Both instances cache the device: each shows the page of the link made before.
      for (const instance of cluster.instances) assert.is((await request(`${instance.url}/qr/${token}/state`)).status, 200, 'the earlier link')
      const again = await cluster.call(round, '/api/developer', { authkey, message: 'loja', conecteQR: 'true' })
      assert.is(again.status, 200, again.text)
      token = again.body.link.split('/qr/')[1]
      const shown = await Promise.all(cluster.instances.map(instance => request(`${instance.url}/qr/${token}/state`)))
      statuses.push(shown.map(answer => answer.status).join(' '))
    }
    assert.equal(statuses, ['200 200', '200 200', '200 200', '200 200'])
  } finally {
    await cluster.stop()
  }
})

test.run()
