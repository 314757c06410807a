import { test } from 'uvu'
import * as assert from 'uvu/assert'
import Koa from 'koa'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import { createGateway } from '../../../src/index.ts'
import { registerAt } from '../../helpers/cluster-in-process.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { listen, post } from '../../helpers/http.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { scrape } from '../../helpers/metrics.ts'

const FRIEND = '5511988887777'

test('a forward refused by a process that does not hold the device (a new one at the holder URL): the client gets 503, the forward counts as failed, not answered', async () => {
  const network = new MemoryNetwork()
  const store = memoryStorage()
  const secret = 'a cluster secret of enough length'
  /** A server whose routes can be swapped (the process behind a URL replaced). */
  const server = async () => {
    let routes: Koa.Middleware = (_ctx, next) => next()
    const app = new Koa()
    app.use((ctx, next) => routes(ctx, next))
    return { ...(await listen(app)), serve: (next: Koa.Middleware) => void (routes = next) }
  }
  const options = (url: string, storage = store.connectAgain()) => ({
    storage,
    transport: memoryTransport({ network }),
    allowPrivateUrls: true,
    metrics: true as const,
    cluster: { secret, advertiseUrl: url },
  })
  const [atHolder, atOther] = [await server(), await server()]
  const holder = await createGateway(options(atHolder.url, store))
  atHolder.serve(holder.routes())
  const other = await createGateway(options(atOther.url))
  atOther.serve(other.routes())
  const restarted = await createGateway(options(atHolder.url.replace('127.0.0.1', 'localhost')))
  try {
    await holder.ready
    await other.ready
    const authkey = await registerAt(atHolder.url, 'refused-metric@example.com')
    const added = await post(`${atHolder.url}/api/v2/qrcode`, { authkey, setAppkey: 'loja' })
    await network.scan({ deviceId: added.body.id }, '5511944443333')
    await waitFor(
      async () => (await post(`${atHolder.url}/api/developer`, { authkey, message: 'loja', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true,
    )
    const forwards: { ok: boolean }[] = []
    other.events.on('forward', event => forwards.push(event))
    atHolder.serve(restarted.routes())
    const sent = await post(`${atOther.url}/api/create-message`, { authkey, appkey: 'loja', to: FRIEND, message: 'oi' })
    assert.equal([sent.status, sent.body.message], [503, 'O dispositivo está mudando de instância. Tente novamente em instantes.'])
    assert.equal(
      forwards.map(forward => forward.ok),
      [false],
      'the forward event says the holder did not answer',
    )
    const counted = await scrape(atOther.url)
    assert.is(counted.value('zapgate_forwarded_requests_total', { result: 'failed' }), 1)
    assert.is(counted.value('zapgate_forwarded_requests_total', { result: 'answered' }), 0)
  } finally {
    for (const gateway of [restarted, other, holder]) await gateway.close().catch(() => {})
    await atHolder.stop()
    await atOther.stop()
  }
})

test.run()
