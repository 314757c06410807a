import { connect, type Socket } from 'node:net'

/** A JSON POST as raw HTTP/1.1 text (for a kept-alive socket a test drives by hand). */
export function rawPost(path: string, body: Record<string, unknown>): string {
  const json = JSON.stringify(body)
  return `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`
}

/** Write one request (text, or bytes as they are) and read its whole answer (one with Content-Length). */
export function exchange(socket: Socket, text: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = ''
    const onData = (chunk: Buffer) => {
      got += chunk.toString('utf8')
      const end = got.indexOf('\r\n\r\n')
      const length = /\r\ncontent-length: (\d+)/i.exec(got)
      if (end >= 0 && length && Buffer.byteLength(got.slice(end + 4)) >= Number(length[1])) {
        socket.off('data', onData)
        resolve(got)
      }
    }
    socket.on('data', onData)
    socket.once('error', reject)
    socket.once('close', () => reject(new Error('connection closed before the whole answer')))
    socket.write(text)
  })
}

/** A TCP connection to the host and port of `url`, once connected. */
export async function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port), hostname)
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  return socket
}
