/** Stub HTTP servers for the client's tests: each records the bodies it got and answers as its handler says. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'

/** How a stub answers a request (its body read). */
export type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void

/** A server that records each request body and answers as `handler` says. */
export function serve(handler: Handler): Promise<{ url: string; bodies: string[]; close(): void }> {
  const bodies: string[] = []
  return new Promise(resolve => {
    const server = createServer((req, res) => {
      let body = ''
      req.on('data', chunk => (body += chunk)).on('end', () => (bodies.push(body), handler(req, body, res)))
    }).listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      resolve({ url: `http://127.0.0.1:${port}`, bodies, close: () => (server.closeAllConnections(), server.close()) })
    })
  })
}

/** A handler answering `status` with `body` as JSON (and `headers`). */
export const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (_req: IncomingMessage, _body: string, res: ServerResponse) =>
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body))
