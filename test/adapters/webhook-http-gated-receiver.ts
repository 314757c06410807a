import http from 'node:http'
import type { AddressInfo } from 'node:net'

/** One request a gated receiver got. */
export interface GatedHook {
  path: string
  headers: http.IncomingHttpHeaders
  body: string
}

/** A local receiver (node:http, port 0) whose paths answer 200 at once, or hang while held. */
export interface GatedReceiver {
  /** `http://127.0.0.1:<port>`: append a path. */
  origin: string
  hooks: GatedHook[]
  /** Requests to `path`. */
  to(path: string): GatedHook[]
  /** Requests to `path` that were answered (a held one is answered when released, if its client still waits). */
  answered(path: string): number
  /** Hold the requests to `path`: they get no answer until released. */
  hold(path: string): void
  /** Answer the held requests to `path` and answer the next ones at once. */
  release(path: string): void
  stop(): Promise<void>
}

/** Start a gated receiver; every path answers at once until held. */
export async function startGatedReceiver(): Promise<GatedReceiver> {
  const held = new Map<string, http.ServerResponse[]>()
  const answered = new Map<string, number>()
  const hooks: GatedHook[] = []
  const answer = (path: string, res: http.ServerResponse) => {
    if (!res.socket || res.socket.destroyed) return
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
    answered.set(path, (answered.get(path) ?? 0) + 1)
  }
  const server = http.createServer(async (req, res) => {
    let body = ''
    for await (const chunk of req) body += chunk
    const path = req.url ?? '/'
    hooks.push({ path, headers: req.headers, body })
    const waiting = held.get(path)
    if (waiting) waiting.push(res)
    else answer(path, res)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    hooks,
    to: path => hooks.filter(hook => hook.path === path),
    answered: path => answered.get(path) ?? 0,
    hold(path) {
      if (!held.has(path)) held.set(path, [])
    },
    release(path) {
      const waiting = held.get(path) ?? []
      held.delete(path)
      for (const res of waiting) answer(path, res)
    },
    async stop() {
      for (const waiting of held.values()) for (const res of waiting) res.destroy()
      server.closeAllConnections()
      await new Promise(resolve => server.close(resolve))
    },
  }
}
