import { createServer, type Socket } from 'node:net'

/** Where a whole request arrived: its socket, its index over the server, on its connection, and its connection's index. */
export interface RawRequest {
  socket: Socket
  index: number
  onConnection: number
  connection: number
}

/**
 * A TCP server on 127.0.0.1 that, once it has read a whole request (headers and a content-length
 * body), runs `onRequest`: the test writes (or cuts) the answer bytes itself.
 */
export async function rawServer(onRequest: (request: RawRequest) => void) {
  let index = 0
  let connections = 0
  const sockets = new Set<Socket>()
  const server = createServer(socket => {
    const connection = connections++
    let onConnection = 0
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    let buffer = Buffer.alloc(0)
    socket.on('data', chunk => {
      buffer = Buffer.concat([buffer, chunk])
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n')
        if (end < 0) return
        const head = buffer.subarray(0, end).toString()
        const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0)
        if (buffer.length < end + 4 + length) return
        buffer = buffer.subarray(end + 4 + length)
        onRequest({ socket, index: index++, onConnection: onConnection++, connection })
      }
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}/hook`,
    /** Requests read so far. */
    count: () => index,
    /** Connections accepted so far. */
    connections: () => connections,
    stop: () =>
      new Promise<void>(resolve => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}
