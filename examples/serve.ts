import type Koa from 'koa'
import type { Server } from 'node:http'
import type { Gateway } from 'zapgate'

/**
 * Listen with `app` on `port` (0 for any free one); resolves once listening, with the URL and a stop
 * function that closes the server (open connections included) and then the gateway.
 */
export async function serve(app: Koa, port: number, gateway: Gateway): Promise<{ url: string; stop(): Promise<void> }> {
  const server: Server = app.listen(port)
  await new Promise(resolve => server.once('listening', resolve))
  const address = server.address()
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}`,
    async stop() {
      server.close()
      server.closeAllConnections?.()
      await gateway.close()
    },
  }
}
