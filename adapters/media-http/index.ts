import { basename } from 'node:path'
import { MediaFetchError, type FetchedMedia, type MediaFetcher } from 'zapgate'
import { guardedAgents, type AddressPolicy, type LookupFunction } from 'zapgate/adapter-kit'
import { checkUrl } from 'zapgate/adapter-kit'

/** Options of the default media fetcher. */
export interface HttpMediaOptions {
  /** Allow loopback and private targets (tests, private deployments). Default false. */
  allowPrivateUrls?: boolean
  /**
   * Which IP addresses may be reached (literal, resolved, and on every redirect hop). Default:
   * public addresses only. Ignored with `allowPrivateUrls`. E.g. allow one internal file server.
   */
  isAllowedAddress?: AddressPolicy
  /** DNS lookup of every connection (default `dns.lookup`): tests map names to addresses with it. */
  lookup?: LookupFunction
  /** Most redirects followed (each target checked again). Default 3. */
  maxRedirects?: number
}

/**
 * The default MediaFetcher: got, over agents that check every address at connect time (after DNS,
 * so a public name pointing inside is refused too, and so is every redirect hop), each redirect's
 * URL checked before it is followed, a size cap enforced while streaming, and a timeout. It reports the bytes a
 * download holds (its Content-Length, then what arrives past it) so that the gateway's media budget counts them.
 */
export function httpMediaFetcher(options: HttpMediaOptions = {}): MediaFetcher {
  const allowPrivate = options.allowPrivateUrls ?? false
  const isAllowedAddress: AddressPolicy | undefined = allowPrivate ? () => true : options.isAllowedAddress
  const urlRules = { allowPrivate, isAllowedAddress }
  let got: Promise<typeof import('got').default> | undefined
  let agent: ReturnType<typeof guardedAgents> | undefined
  const maxRedirects = options.maxRedirects ?? 3
  return {
    reportsBytes: true,
    async fetch(url, limits): Promise<FetchedMedia> {
      let checked = checkUrl(url, urlRules)
      if ('refused' in checked) throw new MediaFetchError('refused', `URL refused (${checked.refused})`)
      got ??= import('got').then(module => module.default)
      agent ??= guardedAgents({ isAllowedAddress, lookup: options.lookup })
      const client = await got
      // One time-out for the whole download, redirects included (got's own starts again at each hop).
      const deadline = Date.now() + limits.timeoutMs
      for (let hops = 0; ; hops++) {
        // Redirects followed here, not by got: got drains a redirect's body with its timers off and no byte count, for as long as the server sends it.
        const stream = client.stream(checked.url, {
          agent,
          timeout: { request: Math.max(1, deadline - Date.now()) },
          retry: { limit: 0 },
          followRedirect: false,
          headers: { 'user-agent': 'zapgate-media/1' },
        })
        const next = await download(stream, checked.url, limits, deadline)
        if ('data' in next) return next
        if (hops >= maxRedirects) throw new MediaFetchError('unreachable', 'too many redirects')
        const hop = checkUrl(next.redirect.href, urlRules)
        if ('refused' in hop) {
          if (next.redirect.protocol !== 'http:' && next.redirect.protocol !== 'https:')
            throw new MediaFetchError('refused', 'redirect to a scheme other than http(s)')
          throw new MediaFetchError('refused', `redirect refused (${hop.refused})`)
        }
        checked = hop
      }
    },
  }
}

/** Read one hop's answer within the limits: the file, or where it redirects (its body not read: the connection is dropped). */
async function download(
  stream: ReturnType<typeof import('got').default.stream>,
  url: URL,
  limits: Parameters<MediaFetcher['fetch']>[1],
  deadline: number,
): Promise<FetchedMedia | { redirect: URL }> {
  // Not got's own `signal`: it stays on the signal after the download, and an abort then is an unhandled stream error.
  const abort = () => stream.destroy(new MediaFetchError('unreachable', 'download aborted'))
  const timer = setTimeout(() => stream.destroy(new MediaFetchError('timeout', 'download timed out')), Math.max(1, deadline - Date.now()))
  if (limits.signal?.aborted) abort()
  limits.signal?.addEventListener('abort', abort)
  const chunks: Buffer[] = []
  let size = 0
  let reported = 0 // the bytes told to onBytes: the declared length, then the received ones past it
  let contentType: string | undefined
  let fileName: string | undefined
  let redirect: URL | undefined
  try {
    stream.on('response', (response: { statusCode: number; headers: Record<string, string | undefined> }) => {
      const location = response.headers.location
      if (response.statusCode >= 300 && response.statusCode < 400 && location) {
        redirect = urlOf(location, url)
        return stream.destroy(redirect ? undefined : new MediaFetchError('refused', 'redirect refused (not a URL)'))
      }
      if (response.statusCode >= 300)
        return stream.destroy(new MediaFetchError('bad-status', `the server answered ${response.statusCode}`, { statusCode: response.statusCode }))
      const length = Number(response.headers['content-length'] ?? 0)
      if (length > limits.maxBytes) return stream.destroy(new MediaFetchError('too-large', `file larger than ${limits.maxBytes} bytes`))
      if (length > 0) limits.onBytes?.((reported = length)) // NaN (a broken header) too is no declared size
      contentType = response.headers['content-type']?.split(';')[0].trim() || undefined
      fileName = fileNameOf(response.headers['content-disposition'], url)
    })
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length
      if (size > limits.maxBytes) throw new MediaFetchError('too-large', `file larger than ${limits.maxBytes} bytes`)
      if (size > reported) limits.onBytes?.((reported = size))
      chunks.push(chunk)
    }
  } catch (err) {
    stream.destroy()
    if (redirect) return { redirect }
    throw toFetchError(err)
  } finally {
    clearTimeout(timer)
    limits.signal?.removeEventListener('abort', abort)
  }
  return redirect ? { redirect } : { data: Buffer.concat(chunks), contentType, fileName }
}

/** A redirect's target against the URL it came from, or undefined when it is no URL. */
function urlOf(location: string, base: URL): URL | undefined {
  try {
    return new URL(location, base)
  } catch {
    return undefined
  }
}

// --- Internal helpers ---

/**
 * The name a Content-Disposition gives, as browsers read it: `filename*` (RFC 5987) before `filename`,
 * whose value is then often an ASCII fallback (`"??.pdf"`); a `filename` of raw UTF-8 bytes (Node reads
 * header values as Latin-1) as UTF-8. Else the URL's last path segment.
 */
function fileNameOf(disposition: string | undefined, url: URL): string | undefined {
  const extended = disposition && /(?:^|;)\s*filename\*\s*=\s*"?([\w!#$&+.^`|~-]+)'[^']*'([^";\s]+)/i.exec(disposition)
  const plain = disposition && /(?:^|;)\s*filename\s*=\s*(?:"([^"]+)"|([^";\s]+))/i.exec(disposition)
  const named = extended ? percentDecoded(extended[2]!, extended[1]!) : plain ? safeDecode(asUtf8(plain[1] ?? plain[2]!)) : undefined
  if (named) return basename(named)
  const last = basename(safeDecode(url.pathname))
  return last && last !== '/' ? last : undefined
}

/** An RFC 5987 value's %XX bytes in its charset (UTF-8, else read as Latin-1). */
function percentDecoded(value: string, charset: string): string {
  if (charset.toLowerCase() === 'utf-8') return safeDecode(value)
  return value.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
}

/** A header value (each byte one Latin-1 character) read as UTF-8 when its bytes are valid UTF-8. */
function asUtf8(value: string): string {
  if (!/[\x80-\xff]/.test(value) || /[^\x00-\xff]/.test(value)) return value
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(value, 'latin1'))
  } catch {
    return value
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

function toFetchError(err: unknown): MediaFetchError {
  if (err instanceof MediaFetchError) return err
  const e = err as { code?: string; name?: string; message?: string; response?: { statusCode?: number }; cause?: unknown }
  if (e.cause instanceof MediaFetchError) return e.cause
  // got refuses a redirect to another scheme (file:, gopher:...) itself, before any hook runs.
  if (e.code === 'ERR_UNSUPPORTED_PROTOCOL') return new MediaFetchError('refused', 'redirect to a scheme other than http(s)', { cause: err })
  if (e.code === 'ERR_ADDRESS_REFUSED' || (e.cause as { code?: string } | undefined)?.code === 'ERR_ADDRESS_REFUSED') {
    return new MediaFetchError('refused', 'URL resolves to an address that is not allowed', { cause: err })
  }
  // got's HTTPError names the URL with its query (a token, maybe), and would be logged as the cause: its status is all it adds.
  if (e.name === 'HTTPError') return new MediaFetchError('bad-status', `the server answered ${e.response?.statusCode}`, { statusCode: e.response?.statusCode })
  if (e.code === 'ETIMEDOUT' || e.name === 'TimeoutError') return new MediaFetchError('timeout', 'download timed out', { cause: err })
  if (e.name === 'MaxRedirectsError') return new MediaFetchError('unreachable', 'too many redirects', { cause: err })
  return new MediaFetchError('unreachable', 'could not download the file', { cause: err })
}
