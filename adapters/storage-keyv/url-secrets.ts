/** The URL with its password shown as `***` (it ends at the last @ of the authority: a password may hold a raw @, which URLs allow). */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^/?#@:]*):[^/?#]*@/, '//$1:***@')
}

/**
 * `error` with the URL's password taken out of every string field of it and of its causes: a driver's
 * own error may hold the URL (Node's `new URL` TypeError keeps it whole in `input`), and a host logs
 * what storageFromUrl throws (pino's err serializer and console.error print those fields).
 */
export function withoutPassword(error: unknown, url: string): unknown {
  const raw = /\/\/[^/?#@:]*:([^/?#]*)@/.exec(url)?.[1]
  if (!raw) return error
  const secrets = [raw, safeDecode(raw)].filter((secret, at, all) => secret !== '' && all.indexOf(secret) === at)
  const seen = new Set<object>()
  const scrub = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || seen.has(value) || seen.size > 20) return
    seen.add(value)
    for (const key of Reflect.ownKeys(value)) {
      const field = (value as Record<string | symbol, unknown>)[key]
      if (typeof field === 'string' && secrets.some(secret => field.includes(secret))) {
        // Bare only when long enough not to be any word of a message (a password `a` would mangle them all); else as user info.
        const clean = secrets.reduce(
          (text, secret) => (secret.length >= 4 ? text.split(secret) : text.split(`:${secret}@`)).join(secret.length >= 4 ? '***' : ':***@'),
          field,
        )
        try {
          Object.defineProperty(value, key, { value: clean })
        } catch {
          // A frozen field: left as is (no driver's error is frozen).
        }
      } else if (key === 'cause' || key === 'errors') scrub(field)
      else if (Array.isArray(value)) scrub(field)
    }
  }
  scrub(error)
  return error
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}
