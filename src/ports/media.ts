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
  /**
   * `signal`, when given, aborts the download (the gateway no longer needs it, or its media budget cannot take it): stop and throw.
   * `onBytes`, given to a fetcher that `reportsBytes`: call it with the bytes the download will hold, the declared Content-Length
   * when the answer's headers arrive, then the bytes received whenever they pass that (never more than `maxBytes`).
   */
  fetch(
    url: string,
    limits: {
      maxBytes: number
      timeoutMs: number
      signal?: AbortSignal
      /** The bytes the download holds so far (see above); it never throws. */
      onBytes?: (bytes: number) => void
    },
  ): Promise<FetchedMedia>
  /**
   * True when `fetch` calls `limits.onBytes`: the gateway then counts a download by those bytes against its media budget.
   * Without it, a download holds `maxBytes` of the budget while it runs (a 10-card carousel 10 times that).
   */
  readonly reportsBytes?: boolean
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
