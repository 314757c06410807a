import { createServer, type IncomingMessage } from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'

/** A local HTTP CONNECT proxy for tests: it records every tunnel asked for, and can refuse them. */
export interface TestProxy {
  /** `http://127.0.0.1:<port>`, for the transport's `proxy` option. */
  url: string
  /** `host:port` of every CONNECT, in order. */
  tunnels: string[]
  /** Answer every CONNECT with this status instead of tunnelling (e.g. 403), or tunnel again (undefined). */
  refuse: number | undefined
  close(): Promise<void>
}

/** Start a CONNECT proxy on a free loopback port; tunnels go wherever they ask (loopback in tests). */
export async function startProxy(): Promise<TestProxy> {
  const open = new Set<Socket>()
  const server = createServer((_, res) => res.writeHead(405).end())
  const proxy = { tunnels: [] as string[], refuse: undefined as number | undefined } as TestProxy
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    open.add(client)
    client.on('close', () => open.delete(client))
    client.on('error', () => client.destroy())
    proxy.tunnels.push(req.url ?? '')
    if (proxy.refuse) return void client.end(`HTTP/1.1 ${proxy.refuse} Refused by the test proxy\r\nContent-Length: 0\r\n\r\n`)
    const [host, port] = (req.url ?? '').split(':')
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length) upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    open.add(upstream)
    upstream.on('close', () => open.delete(upstream))
    upstream.on('error', () => client.destroy())
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  proxy.close = async () => {
    for (const socket of open) socket.destroy()
    await new Promise<void>(resolve => server.close(() => resolve()))
  }
  return proxy
}
