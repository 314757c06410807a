/**
 * The HTTP agent (zapgate/adapters/agent-http): an AgentResponder that asks a service of the host's
 * over HTTP, so the agents' brain can live in any language. The standalone server uses it with
 * `GATEWAY_AGENT_URL`.
 */
import type { AgentReply, AgentRequest, AgentResponder } from 'zapgate'
import { checkUrl, guardedAgents, type AddressPolicy, type LookupFunction } from 'zapgate/adapter-kit'

/** Options of the HTTP agent. */
export interface HttpAgentOptions {
  /** Where each agent request is POSTed. Checked like a webhook URL: http(s), no credentials, public unless allowed. */
  url: string
  /** Allow a loopback or private agent URL (an agent beside the gateway). Default false. */
  allowPrivateUrls?: boolean
  /** Which IP addresses may be reached (literal, and resolved at connect time). Default: public only. Ignored with `allowPrivateUrls`. */
  isAllowedAddress?: AddressPolicy
  /** DNS lookup of every connection (default `dns.lookup`): tests map names to addresses with it. */
  lookup?: LookupFunction
  /** Extra request headers, e.g. `{ authorization: 'Bearer …' }`. */
  headers?: Record<string, string>
  /** Largest answer read, in bytes; a longer one is an error (no reply). Default 64 KiB. */
  maxResponseBytes?: number
}

/** The HTTP agent: an AgentResponder, and `close()` to drop its idle connections. */
export interface HttpAgentResponder extends AgentResponder {
  close(): void
}

/**
 * An AgentResponder that POSTs each agent request (the AgentRequest without its signal) as JSON to
 * `url`, and replies with the answer's text: a `text/plain` body, or `{"text": "…"}` in JSON
 * (`{"text": null}`, `{}`, an empty text or a 204: no reply), read in the charset its content type declares (UTF-8
 * when none; one no decoder knows is an error). Another status or shape (a JSON array, an object with
 * fields but no `text`, a `text` not a string) is an error, and so is an
 * answer after the gateway stopped waiting (the request's signal aborts the POST): as with any
 * responder, the gateway logs it and sends no reply. No redirects; private and loopback addresses are
 * refused (on the URL, and after DNS at connect time) unless allowed.
 */
export function httpAgentResponder(options: HttpAgentOptions): HttpAgentResponder {
  const allowPrivate = options.allowPrivateUrls ?? false
  const isAllowedAddress: AddressPolicy | undefined = allowPrivate ? () => true : options.isAllowedAddress
  const checked = checkUrl(options.url, { allowPrivate, isAllowedAddress })
  if ('refused' in checked) throw new Error(`agent URL refused (${checked.refused}): ${redact(options.url)}`)
  const maxBytes = options.maxResponseBytes ?? 64 * 1024
  const agent = guardedAgents({ isAllowedAddress, lookup: options.lookup })
  let got: Promise<typeof import('got').default> | undefined

  return {
    async respond({ signal, ...request }: AgentRequest): Promise<AgentReply> {
      got ??= import('got').then(module => module.default)
      const stream = (await got).stream.post(checked.url, {
        agent,
        body: JSON.stringify(request),
        headers: { ...options.headers, 'content-type': 'application/json', accept: 'application/json, text/plain', 'user-agent': 'zapgate-agent/1' },
        signal,
        retry: { limit: 0 },
        followRedirect: false,
        throwHttpErrors: false,
      })
      let status = 0
      let contentType = ''
      let charset = 'utf-8'
      stream.once('response', (response: { statusCode: number; headers: Record<string, string | undefined> }) => {
        status = response.statusCode
        const [type = '', ...parameters] = (response.headers['content-type'] ?? '').split(';')
        contentType = type.trim().toLowerCase()
        for (const parameter of parameters) charset = /^\s*charset\s*=\s*"?([^"]*)"?\s*$/i.exec(parameter)?.[1].trim().toLowerCase() || charset
      })
      const chunks: Buffer[] = []
      let size = 0
      try {
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          if ((size += chunk.length) > maxBytes) break
          chunks.push(chunk)
        }
      } catch (err) {
        throw requestFailure(err)
      } finally {
        stream.destroy()
      }
      if (size > maxBytes) throw new Error(`the agent answered more than ${maxBytes} bytes`)
      return replyOf(status, contentType, () => decode(Buffer.concat(chunks), charset))
    },
    close() {
      agent.http.destroy()
      agent.https.destroy()
    },
  }
}

// --- Internal helpers ---

/** The reply in an answer of the agent, or an error saying what is wrong with it. */
function replyOf(status: number, contentType: string, body: () => string): AgentReply {
  if (status === 204) return undefined
  if (status < 200 || status > 299) throw new Error(`the agent answered HTTP ${status}`)
  if (contentType === 'text/plain') return body()
  if (contentType === 'application/json' || contentType.endsWith('+json')) {
    let parsed: unknown
    const json = body()
    try {
      parsed = JSON.parse(json)
    } catch {
      throw new Error('the agent answered JSON that does not parse')
    }
    // An array (several texts?) or another value is an error, not "no reply": the host sees in its logs why its agent's answers reach no one.
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error(
        `the agent answered a JSON ${Array.isArray(parsed) ? 'array' : parsed === null ? 'null' : typeof parsed}, not an object with a "text" string`,
      )
    // `{}` is no reply (what JSON.stringify({ text: undefined }) gives); an object with other fields but no `text` names its reply another way.
    if (!('text' in parsed)) {
      if (Object.keys(parsed).length === 0) return undefined
      throw new Error('the agent answered a JSON object without "text"')
    }
    const text = (parsed as { text: unknown }).text
    if (text === null || typeof text === 'string') return text
    throw new Error('the agent answered JSON without a "text" string')
  }
  throw new Error(`the agent answered ${contentType || 'no content type'}, not text/plain or JSON`)
}

/**
 * A failed request as a plain error, its message and code: got's RequestError keeps the request's
 * options (the body, with the customer's text and history, and the headers, with an `authorization`)
 * in an enumerable field that a logger's error serializer writes out.
 */
function requestFailure(err: unknown): Error {
  const { message, code } = (err ?? {}) as { message?: unknown; code?: unknown }
  const failure = new Error(`the agent request failed: ${typeof message === 'string' ? message : 'unknown error'}`)
  return typeof code === 'string' ? Object.assign(failure, { code }) : failure
}

/** `bytes` read in the charset the answer declared (UTF-8 when none: a Java or Spring service answers `text/plain` in ISO-8859-1 by default). */
function decode(bytes: Buffer, charset: string): string {
  let decoder: InstanceType<typeof TextDecoder>
  try {
    decoder = new TextDecoder(charset)
  } catch {
    throw new Error(`the agent answered in charset ${charset.slice(0, 40)}, which cannot be read`)
  }
  return decoder.decode(bytes)
}

/** The URL without credentials, for error messages. */
function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@')
}
