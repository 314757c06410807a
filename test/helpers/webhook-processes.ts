/** Separate webhook-delivering node processes (test/helpers/webhook-deliverer.ts) and a receiver counting their POSTs, for the tests of paused processes. */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startLineProcess, type LineProcess } from './line-process.ts'

/** A receiver counting POSTs per event text; the first POST of `held` is answered only once `release()` is called. */
export async function countingReceiver(held = 'first') {
  const seen: { text: string; id: string }[] = []
  let release!: () => void
  const released = new Promise<void>(resolve => (release = resolve))
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', chunk => (body += chunk))
    req.on('end', async () => {
      const text = JSON.parse(body).text as string
      seen.push({ text, id: String(req.headers['webhook-id']) })
      if (text === held && seen.filter(post => post.text === held).length === 1) await released
      res.end('ok')
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    posts: (text: string) => seen.filter(post => post.text === text).length,
    ids: (text: string) => new Set(seen.filter(post => post.text === text).map(post => post.id)),
    release,
    close: () => (release(), server.closeAllConnections(), new Promise<void>(resolve => server.close(() => resolve()))),
  }
}

/** A running webhook-deliverer process: its child, its output lines so far, and a wait for a line. */
export type Deliverer = LineProcess

/** Start test/helpers/webhook-deliverer.ts with `env` (STORE_URL, STORE_NAMESPACE, RECEIVER_URL, ...). */
export function startDeliverer(env: Record<string, string>): LineProcess {
  return startLineProcess('test/helpers/webhook-deliverer.ts', env, 'webhook process')
}
