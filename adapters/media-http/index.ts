import { basename } from 'node:path'
import { MediaFetchError, type FetchedMedia, type MediaFetcher } from '../../src/ports/media.ts'
import { checkUrl } from '../../src/security/url-policy.ts'

/** Options of the default media fetcher. */
export interface HttpMediaOptions {
  /** Allow loopback and private targets (tests, private deployments). Default false. */
  allowPrivateUrls?: boolean
  /** Most redirects followed (each target checked again). Default 3. */
  maxRedirects?: number
}

/**
 * The default MediaFetcher: got, over agents that refuse private, loopback, link-local and metadata
 * addresses at connect time (after DNS, so a public name pointing inside is refused too, and so is
 * every redirect hop), a size cap enforced while streaming, and a timeout.
 */
export function httpMediaFetcher(options: HttpMediaOptions = {}): MediaFetcher {
  const allowPrivate = options.allowPrivateUrls ?? false
  let clients: Promise<Clients> | undefined
  return {
    async fetch(url, limits): Promise<FetchedMedia> {
      const checked = checkUrl(url, { allowPrivate })
      if ('refused' in checked) throw new MediaFetchError('refused', `URL refused (${checked.refused})`)
      clients ??= loadClients(allowPrivate)
      const { got, agent } = await clients
      const stream = got.stream(checked.url, {
        agent,
        timeout: { request: limits.timeoutMs },
        retry: { limit: 0 },
        followRedirect: true,
        maxRedirects: options.maxRedirects ?? 3,
        headers: { 'user-agent': 'zapgate-media/1' },
      })
      const chunks: Buffer[] = []
      let size = 0
      let contentType: string | undefined
      let fileName: string | undefined
      try {
        stream.on('redirect', (_: unknown, next: { url: URL }) => {
          const hop = checkUrl(next.url.href, { allowPrivate })
          if ('refused' in hop) stream.destroy(new MediaFetchError('refused', `redirect refused (${hop.refused})`))
        })
        stream.on('response', (response: { headers: Record<string, string | undefined> }) => {
          const length = Number(response.headers['content-length'] ?? 0)
          if (length > limits.maxBytes) stream.destroy(new MediaFetchError('too-large', `file larger than ${limits.maxBytes} bytes`))
          contentType = response.headers['content-type']?.split(';')[0].trim() || undefined
          fileName = fileNameOf(response.headers['content-disposition'], checked.url)
        })
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          size += chunk.length
          if (size > limits.maxBytes) throw new MediaFetchError('too-large', `file larger than ${limits.maxBytes} bytes`)
          chunks.push(chunk)
        }
      } catch (err) {
        stream.destroy()
        throw toFetchError(err)
      }
      return { data: Buffer.concat(chunks), contentType, fileName }
    },
  }
}

// --- Internal helpers ---

type Clients = { got: typeof import('got').default; agent: { http: import('node:http').Agent; https: import('node:https').Agent } | undefined }

async function loadClients(allowPrivate: boolean): Promise<Clients> {
  const { default: got } = await import('got')
  if (allowPrivate) return { got, agent: undefined }
  const { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } = await import('request-filtering-agent')
  return { got, agent: { http: new RequestFilteringHttpAgent({ keepAlive: true }), https: new RequestFilteringHttpsAgent({ keepAlive: true }) } }
}

function fileNameOf(disposition: string | undefined, url: URL): string | undefined {
  const match = disposition && /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition)
  if (match) return basename(decodeURIComponent(match[1]))
  const last = basename(decodeURIComponent(url.pathname))
  return last && last !== '/' ? last : undefined
}

function toFetchError(err: unknown): MediaFetchError {
  if (err instanceof MediaFetchError) return err
  const e = err as { code?: string; name?: string; message?: string; response?: { statusCode?: number } }
  if (e.name === 'HTTPError') {
    return new MediaFetchError('bad-status', `the server answered ${e.response?.statusCode}`, { cause: err, statusCode: e.response?.statusCode })
  }
  if (e.code === 'ETIMEDOUT' || e.name === 'TimeoutError') return new MediaFetchError('timeout', 'download timed out', { cause: err })
  if (e.message?.includes('is not allowed')) return new MediaFetchError('refused', 'URL resolves to a private address', { cause: err })
  if ((err as { cause?: unknown }).cause instanceof MediaFetchError) return (err as { cause: MediaFetchError }).cause
  return new MediaFetchError('unreachable', 'could not download the file', { cause: err })
}
