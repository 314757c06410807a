import { BlockList, isIP } from 'node:net'

/**
 * Address ranges a server-side request must never reach unless the host opts in: loopback, private,
 * CGNAT, link-local (cloud metadata), multicast, reserved, documentation, and their IPv6 forms, with the
 * IPv6 ranges IANA lists as not globally reachable (local-use NAT64, the dummy prefix, SRv6 SIDs).
 * Cloud metadata outside those ranges is listed by address: Azure's wireserver 168.63.129.16 (a
 * public address every Azure VM reaches as its host). Alibaba's 100.100.100.200 is CGNAT, Oracle's
 * 192.0.0.192 is in 192.0.0.0/24, AWS's fd00:ec2::254 is ULA, GCP's metadata.google.internal a name.
 */
const blocked = new BlockList()
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['168.63.129.16', 32],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4')
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['100:0:0:1::', 64],
  ['2001:db8::', 32],
  ['2001::', 23],
  ['3fff::', 20],
  ['5f00::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6')

/** IPv6 forms that embed an IPv4 address: mapped (::ffff:a.b.c.d), translated (::ffff:0:a.b.c.d, SIIT), compatible (::a.b.c.d), NAT64, 6to4. */
function embeddedIPv4(ip: string): string | undefined {
  const words = expandIPv6(ip)
  if (!words) return undefined
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
  const zeros = (n: number) => words.slice(0, n).every(w => w === 0)
  if (zeros(5) && words[5] === 0xffff) return v4(words[6], words[7]) // ::ffff:0:0/96
  if (zeros(4) && words[4] === 0xffff && words[5] === 0) return v4(words[6], words[7]) // ::ffff:0:0:0/96 (IPv4-translated: a SIIT translator reaches a.b.c.d)
  if (zeros(6)) return v4(words[6], words[7]) // ::/96 (deprecated compatible form)
  if (words[0] === 0x64 && words[1] === 0xff9b) return v4(words[6], words[7]) // 64:ff9b::/96
  if (words[0] === 0x2002) return v4(words[1], words[2]) // 2002::/16 (6to4)
  return undefined
}

/** The eight 16-bit words of an IPv6 address, or undefined when it is not one. */
function expandIPv6(ip: string): number[] | undefined {
  let text = ip.replace(/%.*$/, '')
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    const p = dotted[1].split('.').map(Number)
    text = text.slice(0, -dotted[1].length) + `${((p[0] << 8) | p[1]).toString(16)}:${((p[2] << 8) | p[3]).toString(16)}`
  }
  const [head, tail] = text.split('::')
  const h = head ? head.split(':') : []
  const t = tail !== undefined && tail ? tail.split(':') : []
  const fill = text.includes('::') ? 8 - h.length - t.length : 0
  const words = [...h, ...Array(fill).fill('0'), ...t].map(w => parseInt(w, 16))
  return words.length === 8 && words.every(w => w >= 0 && w <= 0xffff) ? words : undefined
}

/** Whether an IP address (v4 or v6, any embedding) is one a server-side request must not reach. */
export function isPrivateAddress(ip: string): boolean {
  const family = isIP(ip.replace(/%.*$/, ''))
  if (family === 4) return blocked.check(ip, 'ipv4')
  if (family !== 6) return true // not an address at all: refuse
  if (blocked.check(ip.replace(/%.*$/, ''), 'ipv6')) return true // first: a range refused whole (local-use NAT64) ends with an IPv4 too
  const v4 = embeddedIPv4(ip)
  return v4 !== undefined && blocked.check(v4, 'ipv4')
}

/** What a per-IP limit counts: an IPv4 address (also as ::ffff:a.b.c.d), or an IPv6 address's /64, which one client holds whole; a port a proxy wrote with it (`a.b.c.d:port`, `[v6]:port`, as Azure's do) is dropped: a new connection is not a new client. */
export function clientNetwork(address: string): string {
  const ip = /^\[([^\]]+)\](?::\d+)?$/.exec(address)?.[1] ?? /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(address)?.[1] ?? address
  const words = isIP(ip.replace(/%.*$/, '')) === 6 ? expandIPv6(ip) : undefined
  if (!words) return ip
  if (words.slice(0, 5).every(w => w === 0) && words[5] === 0xffff) return `${words[6] >> 8}.${words[6] & 255}.${words[7] >> 8}.${words[7] & 255}`
  return `${words
    .slice(0, 4)
    .map(w => w.toString(16))
    .join(':')}::/64`
}

const internalNames = /(^|\.)(localhost|local|internal|localdomain|home\.arpa)$/i

/** Names refused whatever an address policy allows: loopback by definition (RFC 6761) and GCP's metadata service. */
const neverNames = /^((.+\.)?localhost|metadata(\.google\.internal)?)$/i

/** Why a URL is refused, or undefined when it may be fetched. */
export type UrlRefusal = 'malformed' | 'scheme' | 'credentials' | 'private'

/**
 * Check a user-supplied URL before any server-side request: http(s) only, no credentials, not port 0
 * (which no connection reaches, whatever the policy), and (unless
 * `allowPrivate`) no literal private address or internal host name. The URL parser canonicalises
 * decimal, hex and octal IPv4 forms first, so `http://2130706433/` is seen as 127.0.0.1. Names that
 * resolve to private addresses are caught again at connect time by the HTTP adapters.
 * `isAllowedAddress` (the adapters' seam) replaces the private-address rule: a literal address is
 * judged by it, and an internal name (`*.internal`, `*.local`, a single label) is let through to DNS,
 * where the adapters judge every address it resolves to by it at connect time; `localhost` and the
 * cloud metadata names stay refused.
 */
export function checkUrl(
  input: string,
  options: { allowPrivate: boolean; isAllowedAddress?: (address: string) => boolean },
): { url: URL } | { refused: UrlRefusal } {
  let url: URL
  try {
    url = new URL(input)
  } catch {
    return { refused: 'malformed' }
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { refused: 'scheme' }
  if (url.username || url.password) return { refused: 'credentials' }
  if (url.port === '0') return { refused: 'malformed' } // no connection reaches port 0: a webhook there would only fail until its dead letter
  if (options.allowPrivate) return { url }
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '') // every trailing dot: the parser keeps `localhost..` as written
  if (!host) return { refused: 'malformed' }
  if (isIP(host)) return (options.isAllowedAddress ? !options.isAllowedAddress(host) : isPrivateAddress(host)) ? { refused: 'private' } : { url }
  if (options.isAllowedAddress) return neverNames.test(host) ? { refused: 'private' } : { url }
  if (internalNames.test(host) || !host.includes('.')) return { refused: 'private' }
  return { url }
}

/** A URL as it is logged: without credentials (up to the authority's last `@`: a password may hold a raw one), query or fragment, which may carry a token. */
export function loggableUrl(url: string): string {
  return url.replace(/\/\/[^/?#]*@/, '//').replace(/[?#][^]*$/, '')
}
