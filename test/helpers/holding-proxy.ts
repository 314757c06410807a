import { createConnection, createServer, type Socket } from 'node:net'

/**
 * A TCP proxy on a free port of 127.0.0.1 in front of `target`, standing in for a congested link:
 * `hold(ms)` keeps every byte it receives, both ways, for that long and then lets them through in
 * the order they came (nothing is lost, only late). Opening and closing connections is not delayed.
 * It also keeps what clients sent, as an eavesdropper on the link would (`takeSent`).
 */
export interface HoldingProxy {
  port: number
  /** The bytes clients sent through the proxy since the last call, in order; forgotten once taken. */
  takeSent(): Buffer
  /** Bytes in both directions wait until `ms` from now, then go on in order. Resolves once released. */
  hold(ms: number): Promise<void>
  close(): Promise<void>
}

/** Start a holding proxy to `target` (`host:port`). */
export async function startHoldingProxy(target: { host: string; port: number }): Promise<HoldingProxy> {
  const sockets = new Set<Socket>()
  let heldUntil = 0
  /** Writers waiting for the hold to end, in arrival order across all connections. */
  const waiting: (() => void)[] = []
  let releaseTimer: NodeJS.Timeout | undefined
  let sent: Buffer[] = []

  const forward = (from: Socket, to: Socket) => {
    const queue: Buffer[] = []
    const flush = () => {
      for (const chunk of queue.splice(0)) to.write(chunk)
    }
    from.on('data', chunk => {
      if (Date.now() < heldUntil || queue.length > 0) {
        if (queue.length === 0) waiting.push(flush)
        queue.push(chunk)
      } else to.write(chunk)
    })
    from.on('end', () => {
      if (queue.length === 0) to.end()
      else waiting.push(() => to.end())
    })
  }

  const server = createServer(client => {
    const upstream = createConnection(target)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('error', () => (client.destroy(), upstream.destroy()))
      socket.on('close', () => sockets.delete(socket))
    }
    client.on('data', chunk => sent.push(chunk))
    forward(client, upstream)
    forward(upstream, client)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0

  return {
    port,
    takeSent() {
      const taken = Buffer.concat(sent)
      sent = []
      return taken
    },
    hold(ms) {
      heldUntil = Date.now() + ms
      clearTimeout(releaseTimer)
      return new Promise(resolve => {
        releaseTimer = setTimeout(() => {
          heldUntil = 0
          for (const release of waiting.splice(0)) release()
          resolve()
        }, ms)
      })
    },
    async close() {
      clearTimeout(releaseTimer)
      for (const socket of sockets) socket.destroy()
      await new Promise(resolve => server.close(resolve))
    },
  }
}
