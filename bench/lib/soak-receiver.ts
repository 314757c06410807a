import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * The load soak's webhook receiver: `/slow` answers 204 after `slowHoldMs` (unless the client gave
 * up first), every other path at once. Counts requests, the distinct incoming texts (`mensagem <n>`)
 * of the other paths, and the most `/slow` requests held at once (those whose client still waits).
 */
export async function soakReceiver(slowHoldMs: number) {
  const receiver = { origin: '', count: 0, texts: new Set<string>(), slowHeld: 0, slowHeldMost: 0, stop: async () => {} }
  const server: Server = createServer((req, res) => {
    let body = ''
    req.on('data', chunk => (body += chunk))
    req.on('end', () => {
      receiver.count++
      if (req.url !== '/slow') {
        const text = /"text":"(mensagem \d+)"/.exec(body)?.[1]
        if (text) receiver.texts.add(text)
        res.writeHead(204).end()
        return
      }
      receiver.slowHeldMost = Math.max(receiver.slowHeldMost, ++receiver.slowHeld)
      const timer = setTimeout(() => res.writeHead(204).end(), slowHoldMs)
      res.once('close', () => {
        clearTimeout(timer)
        receiver.slowHeld--
      })
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  receiver.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  receiver.stop = () =>
    new Promise(resolve => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return receiver
}
