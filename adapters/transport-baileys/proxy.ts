import type { Agent } from 'node:http'
import { importOptional } from 'zapgate/adapter-kit'

/** A proxy URL (`http://`, `https://`, `socks4://`, `socks5://`, with `user:password@` when needed), or one per device. */
export type ProxyOption = string | ((deviceId: string) => string | undefined)

const PROTOCOLS = ['http:', 'https:', 'socks:', 'socks4:', 'socks4a:', 'socks5:', 'socks5h:']

/** The URL of a proxy the adapter can use (http(s) CONNECT or SOCKS), else undefined. */
export function parseProxyUrl(text: string): URL | undefined {
  try {
    const url = new URL(text.trim())
    return PROTOCOLS.includes(url.protocol) && url.hostname !== '' ? url : undefined
  } catch {
    return undefined
  }
}

/** The proxy URL for a device, from the `proxy` option (a URL for all, or a function per device). */
function proxyUrlFor(option: ProxyOption | undefined, deviceId: string): string | undefined {
  const chosen = typeof option === 'function' ? option(deviceId) : option
  if (chosen === undefined || chosen === '') return undefined
  if (typeof chosen !== 'string' || !parseProxyUrl(chosen))
    throw new TypeError(`baileysTransport: the proxy for device ${deviceId} is not an http(s) or socks URL`)
  return chosen.trim()
}

/**
 * Node http.Agents by proxy URL, one per URL (reused by every socket and request through it):
 * https-proxy-agent tunnels with CONNECT through an http(s) proxy, socks-proxy-agent through a
 * SOCKS 4/5 proxy. Both are Node Agents, so one agent serves the WebSocket (ws), media uploads
 * (Baileys' `fetchAgent`, sent with node:https) and the adapter's own requests (downloads, version).
 * A device's session holds its URL's agent until the device is logged out: the agent of a URL no
 * device holds any more is destroyed (its pooled tunnels closed), so proxies chosen per device
 * (one URL each) leave nothing behind their deleted devices.
 */
export class ProxyAgents {
  private readonly agents = new Map<string, Promise<Agent>>()
  /** The URL each device holds. */
  private readonly held = new Map<string, string>()

  /** The agent for `url` (created on first use). */
  get(url: string): Promise<Agent> {
    let agent = this.agents.get(url)
    if (!agent) {
      agent = createAgent(url)
      this.agents.set(url, agent)
      agent.catch(() => this.agents.get(url) === agent && this.agents.delete(url))
    }
    return agent
  }

  /** The agent of the device's proxy (from the `proxy` option), if it has one; `hold` (its session's): kept until `release(deviceId)`. */
  forDevice(option: ProxyOption | undefined, deviceId: string, { hold = false } = {}): Promise<Agent | undefined> {
    const url = proxyUrlFor(option, deviceId)
    return url === undefined ? Promise.resolve(undefined) : hold ? this.hold(deviceId, url) : this.get(url)
  }

  /** The device no longer uses its proxy: its URL's agent is destroyed when no other device holds it. */
  release(deviceId: string): void {
    const url = this.held.get(deviceId)
    if (url === undefined) return
    this.held.delete(deviceId)
    this.letGo(url)
  }

  /** Close the agents' pooled connections. */
  destroy(): void {
    for (const agent of this.agents.values()) void agent.then(a => a.destroy()).catch(() => undefined)
    this.agents.clear()
    this.held.clear()
  }

  /** The agent for `url`, held for `deviceId` until `release(deviceId)` (holding another URL lets the first go). */
  private hold(deviceId: string, url: string): Promise<Agent> {
    const before = this.held.get(deviceId)
    this.held.set(deviceId, url)
    if (before !== undefined && before !== url) this.letGo(before)
    return this.get(url)
  }

  /** Destroy `url`'s agent unless a device still holds it (a scan of the holds: a logout's, not a send's). */
  private letGo(url: string): void {
    for (const held of this.held.values()) if (held === url) return
    const agent = this.agents.get(url)
    this.agents.delete(url)
    void agent?.then(a => a.destroy()).catch(() => undefined)
  }
}

/** `url` with its password replaced, for logs and status reasons. */
export function redactProxy(url: string): string {
  const parsed = parseProxyUrl(url)
  if (!parsed) return '(invalid proxy URL)'
  if (parsed.password) parsed.password = '***'
  return parsed.href.replace(/\/$/, '')
}

// --- Internal helpers ---

async function createAgent(url: string): Promise<Agent> {
  const parsed = parseProxyUrl(url)
  if (!parsed) throw new TypeError('not a proxy URL')
  if (parsed.protocol === 'http:' || parsed.protocol === 'https:') {
    const { HttpsProxyAgent } = await importOptional('https-proxy-agent', 'An http(s) proxy for the Baileys transport', () => import('https-proxy-agent'), '^9')
    return new HttpsProxyAgent(parsed, { keepAlive: true })
  }
  const { SocksProxyAgent } = await importOptional('socks-proxy-agent', 'A SOCKS proxy for the Baileys transport', () => import('socks-proxy-agent'), '^10')
  return new SocksProxyAgent(parsed, { keepAlive: true })
}
