import Koa from 'koa'
import { MemoryNetwork, memoryTransport } from '../../adapters/transport-memory/index.ts'
import { createGateway, type Gateway } from '../../src/index.ts'
import { registerAt } from './cluster-in-process.ts'
import { memoryStorage } from './memory-storage.ts'
import { listen, post } from './http.ts'
import { waitFor } from './gateway.ts'

/** Two instances of a cluster in this process, a device `loja` linked on the first (the holder), and a new process ready to take the holder's URL (`restart()`): the store still names the old one. */
export interface RestartedHolder {
  network: MemoryNetwork
  authkey: string
  holder: Gateway
  other: Gateway
  atOther: { url: string }
  /** The new process answers at the holder's URL from now on. */
  restart(): void
  stop(): Promise<void>
}

/** Start a RestartedHolder (`metrics` on each instance when asked), its account registered under `email`. */
export async function restartedHolder(email: string, extra: { metrics?: true } = {}): Promise<RestartedHolder> {
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
    cluster: { secret, advertiseUrl: url },
    ...extra,
  })
  const [atHolder, atOther] = [await server(), await server()]
  const holder = await createGateway(options(atHolder.url, store))
  atHolder.serve(holder.routes())
  const other = await createGateway(options(atOther.url))
  atOther.serve(other.routes())
  // The new process at the holder's URL (spelt another way, so that the old one, still alive in this process, does not stop its start).
  const restarted = await createGateway(options(atHolder.url.replace('127.0.0.1', 'localhost')))
  const stop = async () => {
    for (const gateway of [restarted, other, holder]) await gateway.close().catch(() => {})
    await atHolder.stop()
    await atOther.stop()
  }
  try {
    await holder.ready
    await other.ready
    const authkey = await registerAt(atHolder.url, email)
    const added = await post(`${atHolder.url}/api/v2/qrcode`, { authkey, setAppkey: 'loja' })
    await network.scan({ deviceId: added.body.id }, '5511944443333')
    await waitFor(
      async () => (await post(`${atHolder.url}/api/developer`, { authkey, message: 'loja', checkDispositivo: 'true' })).body?.dispositivo?.conectado === true,
    )
    return { network, authkey, holder, other, atOther, restart: () => atHolder.serve(restarted.routes()), stop }
  } catch (err) {
    await stop()
    throw err
  }
}
