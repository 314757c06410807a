import type { ErrorAnswerBody, OperationAnswer, OperationName, OperationRequest } from './client-types.ts'

/**
 * A small typed client of the HTTP API (zapgate/client). Self-contained on purpose: it imports
 * types only and calls the global `fetch`, so a host that imports `zapgate/client` loads this file
 * and nothing of the gateway (no Koa, no superstruct, no operation table).
 *
 * It follows the holder hint of a cluster (the `X-Zapgate-Holder` answer header, docs/scaling.md):
 * the advertised URL of the instance holding a device is remembered per caller key and device
 * reference, and that device's next requests go there, so they need no forward between instances.
 */

/**
 * The answer header that tells an authenticated caller where its device is held (cluster mode):
 * the holder's advertised URL, set by the gateway once the caller's account and device are found
 * and the request is worked on that instance (or relayed from the holder, which set it). Never on
 * a 401 or 404 answer, nor by a gateway outside cluster mode. The gateway's router sets it
 * (src/http/forwarding/to-holder.ts); this client follows it.
 */
export const HOLDER_HEADER = 'x-zapgate-holder'

/** Where each operation is posted, and the body field naming its device (none: the operation has no device to route by). */
export const OPERATION_ROUTES = {
  registerUser: { path: '/api/auth' },
  createAgent: { path: '/api/v2/ia', device: 'device' },
  generateQrCode: { path: '/api/v2/qrcode', device: 'setAppkey' },
  addDevice: { path: '/api/developer', device: 'message' },
  deviceStatus: { path: '/api/developer', device: 'message' },
  deleteDevice: { path: '/api/developer', device: 'message' },
  deleteShareLink: { path: '/api/developer', device: 'appkey' },
  deleteFlowConversations: { path: '/api/settings', device: 'appkey' },
  switchWebhook: { path: '/api/settings', device: 'appkey' },
  listSchedules: { path: '/api/create-message', device: 'appkey' },
  verifyOtp: { path: '/api/create-message', device: 'appkey' },
  sendOtp: { path: '/api/create-message', device: 'appkey' },
  markMessageRead: { path: '/api/create-message', device: 'appkey' },
  deleteMessage: { path: '/api/create-message', device: 'appkey' },
  reactToMessage: { path: '/api/create-message', device: 'appkey' },
  sendCarousel: { path: '/api/create-message', device: 'appkey' },
  sendButtons: { path: '/api/create-message', device: 'appkey' },
  sendMedia: { path: '/api/create-message', device: 'appkey' },
  sendContact: { path: '/api/create-message', device: 'appkey' },
  sendLocation: { path: '/api/create-message', device: 'appkey' },
  sendText: { path: '/api/create-message', device: 'appkey' },
  groupInfo: { path: '/api/groups', device: 'appkey' },
  createGroup: { path: '/api/groups', device: 'appkey' },
  joinGroup: { path: '/api/groups', device: 'appkey' },
} as const satisfies Record<OperationName, { path: string; device?: string }>

/** What createClient needs. */
export interface ClientOptions {
  /** The gateway's URL (its mount point: `https://api.example.com`), where every request goes first. */
  baseUrl: string
  /** The caller's key, added to every body that has none (or an undefined one). */
  authkey?: string
  /** Default: the global `fetch`. */
  fetch?: typeof fetch
  /** A request with no answer by then is given up (it may have been done: never sent again); default 130 s, past the gateway's own 120 s for a forward. A positive number of ms; past 2^31 - 1 (about 24.8 days, what a timer holds; Infinity too) it is that. */
  timeoutMs?: number
}

/** A request's body as `call` takes it: the operation's request, `authkey` optional when the client has one. */
export type ClientRequest<N extends OperationName> = Omit<OperationRequest<N>, 'authkey'> & { authkey?: string }

/** What `call` resolves with: the HTTP status, the answer body (the operation's answer when `status` is 200), the instance that answered, and its `Retry-After` in seconds when it gave one (429, 503). */
export type ClientAnswer<N extends OperationName> =
  | { ok: true; httpStatus: number; body: OperationAnswer<N>; url: string }
  | { ok: false; httpStatus: number; body: ErrorAnswerBody; url: string; retryAfter?: number }

/** A typed client of the gateway (see createClient). */
export interface GatewayClient {
  /** Post operation `name` with `body`; never throws for an answer, only when no answer came. */
  call<N extends OperationName>(name: N, body: ClientRequest<N>): Promise<ClientAnswer<N>>
  /** Where the next request for `device` (its appkey or name, as the body names it) would go. */
  urlFor(device: string, authkey?: string): string
}

/**
 * Make a client of the gateway at `baseUrl`. Each device's requests go to the instance the last
 * answer named as its holder; a request never goes out twice, except once to the base URL when the
 * client could not connect to the remembered holder (refused, a name that does not resolve, no route,
 * the connect time-out: nothing was sent), whose hint is then not followed for a minute. A redirect is not followed (it is
 * the answer: the body and its key go nowhere else). A network error, an answer that is not the
 * gateway's (not JSON, or no numeric `status`: a proxy's error page), or a 503, 401 or 404 makes
 * the client forget the device's holder, so its next request goes to the base URL again (which
 * forwards, and names the new holder). A request unanswered within `timeoutMs` is given up, never sent again.
 * A remembered holder that gave no answer at all (a network error, the time-out) is not followed for a minute either,
 * for any device (those it held go to the base URL meanwhile).
 */
export function createClient(options: ClientOptions): GatewayClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '')
  const send = options.fetch ?? fetch
  /** The holder's URL by caller key and device reference, for the MAX_HOLDERS devices answered last. */
  const holders = new Map<string, string>()
  /** Holder URLs the client could not connect to, and until when they are not followed (at most MAX_UNREACHED). */
  const unreached = new Map<string, number>()
  const keyOf = (authkey: unknown, device: unknown) =>
    typeof authkey === 'string' && typeof device === 'string' && device !== '' ? `${authkey}\n${device}` : undefined

  /** The device's remembered holder, unless another device's call could not reach it (or got no answer) within the minute: it is left for every device it held. */
  const holderOf = (key: string) => {
    const url = holders.get(key)
    if (url === undefined || !((unreached.get(url) ?? 0) > Date.now())) return url
    holders.delete(key)
    return undefined
  }

  const timeoutMs = timerMs(options.timeoutMs ?? DEFAULT_TIMEOUT_MS)
  const post = (url: string, path: string, body: string) =>
    send(url + path, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(timeoutMs) })

  return {
    urlFor(device, authkey = options.authkey) {
      const key = keyOf(authkey, device)
      return (key ? holderOf(key) : undefined) ?? baseUrl
    },
    async call(name, request) {
      const route: { path: string; device?: string } = OPERATION_ROUTES[name]
      const fields = { ...request } as Record<string, unknown>
      if (fields.authkey === undefined && options.authkey !== undefined) fields.authkey = options.authkey
      const key = route.device ? keyOf(fields.authkey, fields[route.device]) : undefined
      const remembered = key ? holderOf(key) : undefined
      const body = JSON.stringify(fields)
      let url = remembered ?? baseUrl
      let response: Response
      try {
        response = await post(url, route.path, body)
      } catch (err) {
        if (!remembered) throw err
        holders.delete(key!)
        // No answer: not followed for a minute (a connect that hangs past timeoutMs is no connect error, but the same unreachable address).
        putNewest(unreached, remembered, Date.now() + UNREACHED_MS, MAX_UNREACHED)
        if (!notConnected(err)) throw err
        url = baseUrl
        response = await post(url, route.path, body)
      }
      let answer: { status?: unknown } | null = null
      try {
        answer = (await response.json()) as { status?: unknown } | null
      } catch (err) {
        if (!(err instanceof SyntaxError)) {
          if (key) holders.delete(key)
          throw err
        }
      }
      if (typeof answer?.status !== 'number') {
        if (key) holders.delete(key)
        // Not the gateway's answer (a proxy's 413 or 502 page, a redirect, its own JSON error) is still an answer: its HTTP status is the error's.
        return { ok: false, httpStatus: response.status, body: { status: response.status, message: response.statusText }, url, ...retryAfterOf(response) }
      }
      if (key) learn(holders, key, response.headers.get(HOLDER_HEADER), answer.status, baseUrl, unreached)
      const ok = answer.status === 200
      return { ok, httpStatus: response.status, body: answer, url, ...(ok ? {} : retryAfterOf(response)) } as ClientAnswer<typeof name>
    },
  }
}

// --- Internal helpers ---

/**
 * Remember the holder the answer names; forget the device's holder on a 503 (the instance is
 * leaving, full or cut off from the holder) and on a refusal or not-found (which name none). A hint
 * that is not a usable URL (holderUrl) is ignored, and so is one `unreached` keeps off until a later time.
 */
function learn(holders: Map<string, string>, key: string, hint: string | null, status: number, baseUrl: string, unreached: Map<string, number>): void {
  const url = holderUrl(hint, baseUrl)
  if (url && (unreached.get(url) ?? Infinity) <= Date.now()) unreached.delete(url)
  if (status === 503 || status === 401 || status === 404) holders.delete(key)
  else if (url && !unreached.has(url)) putNewest(holders, key, url, MAX_HOLDERS)
}

/** Set `key` as the newest entry of `map`; past `limit` entries the oldest quarter goes, in one pass (a cost per put that does not grow with the map). */
function putNewest<V>(map: Map<string, V>, key: string, value: V, limit: number): void {
  map.delete(key)
  map.set(key, value)
  let drop = map.size > limit ? map.size - Math.floor((limit * 3) / 4) : 0
  for (const old of map.keys()) {
    if (drop-- <= 0) break
    map.delete(old)
  }
}

/**
 * The hint as the URL to post to (no trailing slash), or undefined when it is no usable one: not
 * an absolute http(s) URL, plain http while the base URL is https (the caller's key never leaves
 * TLS because of a hint), with credentials, a query or a fragment (the operation's path could not
 * follow it), several joined (`headers.get` joins repeated headers with a comma), or on a port
 * `fetch` refuses to call (BAD_PORTS).
 */
function holderUrl(hint: string | null, baseUrl: string): string | undefined {
  let url: URL
  try {
    url = new URL(hint ?? '')
  } catch {
    return undefined
  }
  const scheme = /^https:/i.test(baseUrl) ? url.protocol === 'https:' : url.protocol === 'https:' || url.protocol === 'http:'
  const plain = !url.username && !url.password && !/[\s,?#]/.test(hint!)
  return scheme && plain && url.host && !BAD_PORTS.has(url.port) ? url.origin + url.pathname.replace(/\/+$/, '') : undefined
}

/**
 * The ports `fetch` refuses to call (the fetch standard's "bad ports": it fails with `bad port`
 * before connecting), which the instances' own forwards (undici's request) do reach: a hint on
 * one is not followed (before, it failed the device's next call, each minute), and the gateway
 * refuses a `cluster.advertiseUrl` on one (src/resolve-options.ts: the media relay fetches it).
 */
export const BAD_PORTS: ReadonlySet<string> = new Set(
  `1 7 9 11 13 15 17 19 20 21 22 23 25 37 42 43 53 69 77 79 87 95 101 102 103 104 109 110 111 113 115 117 119 123 135 137 139
  143 161 179 389 427 465 512 513 514 515 526 530 531 532 540 548 554 556 563 587 601 636 989 990 993 995 1719 1720 1723 2049
  3659 4045 4190 5060 5061 6000 6566 6665 6666 6667 6668 6669 6679 6697 10080`.split(/\s+/),
)

/** The answer's `Retry-After` in seconds, when it gives a number of them. */
function retryAfterOf(response: Response): { retryAfter?: number } {
  const seconds = Number(response.headers.get('retry-after') ?? NaN)
  return Number.isInteger(seconds) && seconds >= 0 ? { retryAfter: seconds } : {}
}

/**
 * `ms` as a timer's delay: at most 2^31 - 1 (a longer one, Infinity included, is that: a timer
 * fires after 1 ms past it, and AbortSignal.timeout refuses Infinity), else createClient throws.
 */
function timerMs(ms: number): number {
  if (!(ms > 0)) throw new RangeError(`createClient: timeoutMs must be a positive number of ms, got ${ms}`)
  return Math.min(ms, 2 ** 31 - 1)
}

/** How long a request may go unanswered by default. */
const DEFAULT_TIMEOUT_MS = 130_000

/** How long a holder URL the client could not connect to is not followed again. */
const UNREACHED_MS = 60_000

/** How many devices' holders (per caller key) a client remembers: the least recently answered go first, and their next request goes through the base URL. */
const MAX_HOLDERS = 10_000

/** How many holder URLs the client could not connect to it keeps off at once (the oldest go first). */
const MAX_UNREACHED = 1_000

/** Codes of a connection that never opened: refused, a name that does not resolve, no route, undici's connect time-out, a TLS handshake that failed (a certificate this client does not trust: nothing was sent). */
const NOT_CONNECTED = new Set([
  ...['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT'],
  ...['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY'],
  ...['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'ERR_TLS_CERT_ALTNAME_INVALID', 'ERR_SSL_WRONG_VERSION_NUMBER'],
])

/** Whether fetch failed before a connection opened: the request never left, so it may go elsewhere. */
function notConnected(err: unknown): boolean {
  const cause = (err as { cause?: { code?: unknown } })?.cause
  return NOT_CONNECTED.has(String(cause?.code))
}
