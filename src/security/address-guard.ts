import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { Agent as HttpAgent, type AgentOptions } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import { isIP, Socket, type LookupFunction } from 'node:net'
import type { Duplex } from 'node:stream'
import { isPrivateAddress } from './url-policy.ts'

/** Decides whether a server-side request may reach an IP address (v4 or v6). */
export type AddressPolicy = (address: string) => boolean

/** The default policy: public addresses only (see isPrivateAddress). */
export const publicAddressesOnly: AddressPolicy = address => !isPrivateAddress(address)

/** A DNS lookup with the signature of `dns.lookup` (what `net.connect` accepts as `lookup`). */
export type { LookupFunction }

/** The error of a connection refused by the address policy (`code` ERR_ADDRESS_REFUSED). */
export class AddressRefusedError extends Error {
  readonly code = 'ERR_ADDRESS_REFUSED'
  constructor(
    readonly address: string,
    readonly host?: string,
  ) {
    super(`address ${address}${host && host !== address ? ` of ${host}` : ''} is not allowed`)
    this.name = 'AddressRefusedError'
  }
}

/** Options of guardedAgents. */
export interface GuardedAgentOptions {
  /** Which addresses may be reached. Default: publicAddressesOnly. */
  isAllowedAddress?: AddressPolicy
  /** The DNS lookup of every connection. Default: `dns.lookup`. */
  lookup?: LookupFunction
  /** Keep connections alive between requests (default true). */
  keepAlive?: boolean
}

/**
 * How long a kept-alive connection may sit idle in the pool before it is closed: an idle connection a
 * NAT or load balancer dropped without a word would hang the next request on it until its time-out.
 * Node 20's agent heeds a receiver's `Keep-Alive: timeout=N` (closing 1 s before it) only when it has
 * a timeout of its own, and then only to shorten it. 4 s, as undici's default.
 */
const IDLE_SOCKET_TIMEOUT_MS = 4_000

/**
 * HTTP and HTTPS agents that check every address they connect to: a literal IP host before
 * connecting, and every address a name resolves to (so a public-looking name pointing inside, or a
 * redirect to one, is refused after DNS, at connect time, where rebinding cannot slip past it).
 * A kept-alive connection idle for 4 s, or past the receiver's `Keep-Alive: timeout=N` less 1 s, is
 * closed, never reused (a connection in use is not cut: its request's own time-out applies).
 */
export function guardedAgents(options: GuardedAgentOptions = {}): { http: HttpAgent; https: HttpsAgent } {
  const policy = options.isAllowedAddress ?? publicAddressesOnly
  const lookup = guardedLookup(options.lookup ?? (dnsLookup as LookupFunction), policy)
  const agentOptions: AgentOptions = { keepAlive: options.keepAlive ?? true, timeout: IDLE_SOCKET_TIMEOUT_MS }
  return { http: guardedAgent(HttpAgent, agentOptions, policy, lookup), https: guardedAgent(HttpsAgent, agentOptions, policy, lookup) }
}

// --- Internal helpers ---

type ConnectionOptions = { host?: string | null; lookup?: LookupFunction } & Record<string, unknown>
type ConnectionCallback = (err: Error | null, socket: Duplex) => void

/** An agent of class `Base` (http's or https's Agent) whose every connection goes through connectGuarded. */
function guardedAgent<A extends HttpAgent>(Base: new (options: AgentOptions) => A, options: AgentOptions, policy: AddressPolicy, lookup: LookupFunction): A {
  const Guarded = class extends (Base as new (options: AgentOptions) => HttpAgent) {
    override createConnection(options: ConnectionOptions, callback?: ConnectionCallback): Duplex {
      return connectGuarded(options, callback, policy, lookup, (o, cb) => super.createConnection(o, cb) as Duplex)
    }
  }
  return new Guarded(options) as A
}

/** Refuse a literal address at once; otherwise connect with the guarded lookup. */
function connectGuarded(
  options: ConnectionOptions,
  callback: ConnectionCallback | undefined,
  policy: AddressPolicy,
  lookup: LookupFunction,
  connect: (options: ConnectionOptions, callback?: ConnectionCallback) => Duplex,
): Duplex {
  const host = typeof options.host === 'string' ? options.host.replace(/^\[|\]$/g, '') : undefined
  if (host !== undefined && isIP(host) && !policy(host)) {
    const socket = new Socket()
    const error = new AddressRefusedError(host)
    if (callback) process.nextTick(() => callback(error, socket))
    else process.nextTick(() => socket.destroy(error))
    return socket
  }
  return connect({ ...options, lookup }, callback)
}

/** A lookup that fails when any resolved address is refused by the policy. */
function guardedLookup(lookup: LookupFunction, policy: AddressPolicy): LookupFunction {
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    lookup(hostname, options, ((err: Error | null, address: string | LookupAddress[], family?: number) => {
      if (err) return callback(err)
      const addresses = Array.isArray(address) ? address.map(a => a.address) : [address]
      const refused = addresses.find(a => !policy(a))
      if (refused !== undefined) return callback(new AddressRefusedError(refused, hostname))
      return Array.isArray(address) ? callback(null, address) : callback(null, address, family)
    }) as never)
  }) as LookupFunction
}
