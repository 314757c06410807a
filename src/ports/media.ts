/** Bytes fetched from a URL with what the server said about them. */
export interface FetchedMedia {
  data: Buffer
  /** Content-Type reported by the server, if any. */
  contentType?: string
  /** File name from Content-Disposition or the URL path, if any. */
  fileName?: string
}

/**
 * The media fetcher port: download a user-supplied http(s) URL for sending. Implementations must
 * refuse private, loopback and link-local targets unless told otherwise, cap the size and time out;
 * they throw a MediaFetchError describing what went wrong.
 */
export interface MediaFetcher {
  /** `signal`, when given, aborts the download (the gateway no longer needs it): stop and throw. */
  fetch(url: string, limits: { maxBytes: number; timeoutMs: number; signal?: AbortSignal }): Promise<FetchedMedia>
}

/** Why a media download failed; `reason` maps to the HTTP answer. */
export class MediaFetchError extends Error {
  constructor(
    readonly reason: 'refused' | 'too-large' | 'timeout' | 'unreachable' | 'bad-status',
    message: string,
    options?: { cause?: unknown; statusCode?: number },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'MediaFetchError'
    this.statusCode = options?.statusCode
  }
  /** The HTTP status the server answered, for `bad-status`. */
  readonly statusCode?: number
}
