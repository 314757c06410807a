import { Agent as HttpAgent, request as httpRequest } from 'node:http'
import fc from 'fast-check'
import { request, type Answer } from '../helpers/http.ts'

/**
 * How the fuzz suites put values on the wire: JSON written by hand (own `__proto__` keys and nesting
 * deeper than JSON.stringify allows), urlencoded with qs brackets, multipart, or raw bytes with
 * exactly the headers given. Huge and deep values are built only when sent, so that fast-check's
 * reports stay one line.
 */

/** POST a body in an encoding (JSON written by hand, so own `__proto__` keys and deep nesting go over the wire as such). */
export function send(url: string, body: Record<string, unknown>, encoding: 'json' | 'form' | 'multipart'): Promise<Answer> {
  if (encoding === 'json') return request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: jsonText(body) })
  if (encoding === 'form') return request(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: formEncode(body) })
  const form = new FormData()
  for (const [key, value] of Object.entries(body))
    form.append(key, typeof value === 'string' ? value : value instanceof HugeString ? value.text() : jsonText(value))
  return request(url, { method: 'POST', body: form })
}

/** Send raw bytes with exactly the given headers (no content type unless given), over a kept-alive connection. */
export function sendRaw(url: string, body: Uint8Array | string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const data = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body)
    const req = httpRequest(url, { method: 'POST', agent: rawAgent, headers: { ...headers, 'content-length': String(data.length) } }, res => {
      const chunks: Buffer[] = []
      res.on('data', chunk => chunks.push(chunk))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch {
          parsed = undefined
        }
        resolve({ status: res.statusCode ?? 0, body: parsed, headers: new Headers(res.headers as Record<string, string>), text })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(data)
  })
}

/** A string of `length` characters, built only when sent (so reports stay one line). */
export class HugeString {
  constructor(readonly length: number) {}
  text(): string {
    return 'x'.repeat(this.length)
  }
  [fc.toStringMethod](): string {
    return `HugeString(${this.length})`
  }
}

/** A value nested `depth` levels deep (objects and arrays in turn), written as text without recursion. */
export class DeepValue {
  constructor(readonly depth: number) {}
  json(): string {
    const opens: string[] = []
    for (let i = 0; i < this.depth; i++) opens.push(i % 2 ? '[' : '{"a":')
    return (
      opens.reverse().join('') +
      '"fundo"' +
      opens
        .map(o => (o === '[' ? ']' : '}'))
        .reverse()
        .join('')
    )
  }
  /** The same nesting as qs brackets: `name[a][0][a]...=fundo`. */
  form(name: string): string {
    const path: string[] = []
    for (let i = this.depth - 1; i >= 0; i--) path.push(i % 2 ? '[0]' : '[a]')
    return `${percent(name + path.join(''))}=fundo`
  }
  [fc.toStringMethod](): string {
    return `DeepValue(${this.depth})`
  }
}

// --- Internal helpers ---

const rawAgent = new HttpAgent({ keepAlive: true, maxSockets: 4 })

/** JSON text of a value, with HugeString and DeepValue expanded. */
function jsonText(value: unknown): string {
  if (value instanceof HugeString) return JSON.stringify(value.text())
  if (value instanceof DeepValue) return value.json()
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`
  if (value !== null && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`)
      .join(',')}}`
  return JSON.stringify(value) ?? 'null'
}

function formEncode(body: unknown, prefix = ''): string {
  if (body instanceof DeepValue) return body.form(prefix)
  if (body instanceof HugeString) return `${percent(prefix)}=${body.text()}`
  if (body === null || typeof body !== 'object') return `${percent(prefix)}=${percent(String(body))}`
  const parts: string[] = []
  for (const [key, value] of Object.entries(body)) parts.push(formEncode(value, prefix ? `${prefix}[${key}]` : key))
  return parts.filter(Boolean).join('&')
}

/** Percent-encoding of the UTF-8 bytes of any string (lone surrogates included, as U+FFFD). */
function percent(text: string): string {
  let out = ''
  for (const byte of Buffer.from(text, 'utf8'))
    out += /[A-Za-z0-9_.~-]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).padStart(2, '0')}`
  return out
}
