import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { LookupFunction } from '../../src/security/address-guard.ts'

/**
 * http(s) URLs a server-side request must refuse by default: loopback, private, CGNAT, link-local
 * and cloud metadata addresses, IPv6 ULA/link-local/IPv4-mapped forms, decimal/hex/octal IPv4
 * spellings and internal names.
 */
export const PRIVATE_URLS = [
  'http://127.0.0.1/a.png',
  'http://127.255.255.254:8080/a.png',
  'http://127.1/a.png',
  'http://10.0.0.1/a.png',
  'http://172.16.5.4/a.png',
  'http://192.168.0.10/a.png',
  'http://100.64.0.1/a.png',
  'http://100.127.255.255/a.png',
  'http://169.254.169.254/latest/meta-data/',
  'http://169.254.1.1/a.png',
  'http://0.0.0.0/a.png',
  'http://[::1]/a.png',
  'http://[::]/a.png',
  'http://[fd00::1]/a.png',
  'http://[fc00::1]/a.png',
  'http://[fe80::1]/a.png',
  'http://[::ffff:127.0.0.1]/a.png',
  'http://[::ffff:a9fe:a9fe]/latest/meta-data/',
  'http://[::ffff:10.0.0.1]/a.png',
  'http://2130706433/a.png',
  'http://0x7f000001/a.png',
  'http://0177.0.0.1/a.png',
  'http://0xa9fea9fe/latest/meta-data/',
  'https://localhost/a.png',
  'http://metadata.google.internal/computeMetadata/v1/',
]

/** URLs of schemes other than http(s). */
export const NON_HTTP_URLS = [
  'file:///etc/passwd',
  'ftp://example.com/a.png',
  'gopher://127.0.0.1:6379/_INFO',
  'dict://127.0.0.1:11211/stats',
  'javascript:alert(1)',
  'data:text/plain,oi',
]

/** A DNS lookup answering from a table (name to addresses); unknown names fail like NXDOMAIN. */
export function fakeDns(table: Record<string, string[]>): LookupFunction & { asked: string[] } {
  const asked: string[] = []
  const lookup = ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    asked.push(hostname)
    const addresses = table[hostname]
    process.nextTick(() => {
      if (!addresses) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname }))
      const entries = addresses.map(address => ({ address, family: address.includes(':') ? 6 : 4 }))
      return options?.all ? callback(null, entries) : callback(null, entries[0].address, entries[0].family)
    })
  }) as LookupFunction & { asked: string[] }
  lookup.asked = asked
  return lookup
}

/** A local HTTP server answering every request with `handle`, recording the paths asked. */
export interface LocalServer {
  url: string
  port: number
  requests: string[]
  stop(): Promise<void>
}

/** Serve `handle` on `host` (127.0.0.1 by default; 127.0.0.2 plays a private address), on port `wanted` (default: any free one). */
export async function localServer(handle: (req: IncomingMessage, res: ServerResponse) => void, host = '127.0.0.1', wanted = 0): Promise<LocalServer> {
  const requests: string[] = []
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '/')
    handle(req, res)
  })
  await new Promise<void>(resolve => server.listen(wanted, host, resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://${host}:${port}`,
    port,
    requests,
    stop: () =>
      new Promise(resolve => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A redirector: `/r?to=<url>` answers 302 (or `&status=307`) to that URL; anything else 404. */
export function redirector(): Promise<LocalServer> {
  return localServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    const to = url.searchParams.get('to')
    if (url.pathname !== '/r' || !to) return void res.writeHead(404).end()
    res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: to }).end()
  })
}
