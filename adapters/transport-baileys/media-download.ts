import { createDecipheriv, createHmac, timingSafeEqual } from 'node:crypto'
import type { Agent } from 'node:http'
import type { MediaType, WAMessage } from '@whiskeysockets/baileys'
import { pipeline, Transform, type Readable } from 'node:stream'
import { httpGetStream, readAll } from './http-get.ts'
import type { BaileysModule, SocketLike } from './types.ts'

/** What a download through an agent needs. */
interface AgentDownload {
  lib: BaileysModule
  /** The device's proxy agent (undefined: direct). */
  agent?: Agent
  /** For a re-upload request when WhatsApp no longer has the file (404/410). */
  socket?: SocketLike
  timeoutMs: number
  /** Media larger than this (decrypted) fails the download as soon as the file shows it, unread. */
  maxBytes?: number
  /** Hosts besides WhatsApp's that media may be fetched from (see mediaUrlRefusal). */
  mediaHosts: readonly string[]
}

/**
 * Download and decrypt a received media message through a Node agent (the device's proxy), or
 * directly without one. Baileys' downloadMediaMessage reads the file with `fetch`, which only takes
 * undici dispatchers, so the adapter fetches the encrypted file itself (node:https with the agent),
 * checks its MAC (HMAC-SHA256 over iv and ciphertext, the last 10 bytes) and decrypts it
 * (AES-256-CBC) with the keys Baileys derives (`getMediaKeys`). A 404 or 410 asks the phone to
 * upload the file again, once. The file is read whole: see streamMedia for one read as it comes.
 */
export async function downloadThroughAgent(message: WAMessage, deps: AgentDownload): Promise<Buffer> {
  return readAll(await streamMedia(message, deps, true))
}

/**
 * downloadThroughAgent as a stream: the decrypted bytes come as the file arrives, at the reader's
 * pace, so memory stays bounded whatever the file's size. Resolves once the media host has answered
 * (a refused host, an error status or a failed re-upload reject, unread; `timeoutMs` bounds the wait
 * for that). The stream fails when the connection ends early, past `maxBytes`, once no byte has come
 * for `timeoutMs` (a slow reader's download takes what it takes while bytes keep coming; one that
 * takes nothing that long is cut too), or when the MAC does not match: checked at the end, and the last block of the file is held
 * back until then, so a corrupt or cut file never ends as a whole one. Unlike Baileys' own
 * stream (downloadContentFromMessage), which checks no MAC and pipes without passing on a failure of
 * the connection (its reader waits forever).
 */
export async function streamMedia(message: WAMessage, deps: AgentDownload, whole = false): Promise<Readable> {
  try {
    return await fetchDecrypting(message, deps, whole)
  } catch (error) {
    const status = (error as { status?: unknown }).status
    if ((status !== 404 && status !== 410) || !deps.socket) throw error
    return fetchDecrypting(await deps.socket.updateMediaMessage(message), deps, whole)
  }
}

/** The media fields of a received message that say where its file is. */
interface MediaFields {
  url?: string | null
  directPath?: string | null
  thumbnailDirectPath?: string | null
  mediaKey?: Uint8Array | null
}

/**
 * Why the file of a received media message may not be fetched (undefined: it may). Its `url`,
 * `directPath` and `thumbnailDirectPath` are the sender's word, so any WhatsApp user could point the
 * gateway at an internal address (`url: http://169.254.169.254/…`, or `directPath: @10.0.0.1/x`,
 * which Baileys appends to `https://mmg.whatsapp.net`). Every URL a download could be built from must
 * be https on WhatsApp's media hosts (`whatsapp.net` and its subdomains), or on a host of `mediaHosts`
 * (`host[:port]` as in the URL, e.g. a local peer's `127.0.0.1:8443`).
 */
export function mediaUrlRefusal(lib: Pick<BaileysModule, 'getUrlFromDirectPath'>, media: MediaFields, mediaHosts: readonly string[]): string | undefined {
  let urls: string[]
  try {
    const host = media.url ? new URL(media.url).host : undefined
    urls = [
      media.url,
      media.directPath && lib.getUrlFromDirectPath(media.directPath, host),
      media.thumbnailDirectPath && lib.getUrlFromDirectPath(media.thumbnailDirectPath),
    ].filter((url): url is string => !!url)
    for (const url of urls.map(u => new URL(u))) {
      if (mediaHosts.includes(url.host)) continue
      if (url.protocol !== 'https:' || !/(^|\.)whatsapp\.net$/i.test(url.hostname))
        return `a media URL on ${url.protocol}//${url.host}, not a WhatsApp media host`
    }
  } catch {
    return 'a malformed media URL'
  }
  return urls.length === 0 ? 'no media URL' : undefined
}

/** The media fields of a received message (undefined: not media). */
function mediaFieldsOf(lib: BaileysModule, message: WAMessage): { type: string; media: MediaFields } | undefined {
  const content = lib.extractMessageContent(message.message)
  const type = content ? lib.getContentType(content) : undefined
  const media = type ? (content![type] as MediaFields | undefined) : undefined
  return type && media && typeof media === 'object' ? { type, media } : undefined
}

// --- Internal helpers ---

/** The MAC at the end of an encrypted media file. */
const MAC_BYTES = 10

/** `whole`: read into memory at once, so `timeoutMs` bounds the whole download; else the body may take as long as its reader needs, failing after `timeoutMs` without a byte. */
async function fetchDecrypting(message: WAMessage, deps: AgentDownload, whole: boolean): Promise<Readable> {
  const { lib } = deps
  const { type, media } = mediaFieldsOf(lib, message) ?? {}
  if (!type || !media?.mediaKey || !(media.url || media.directPath)) throw new Error('not a downloadable media message')
  const refusal = mediaUrlRefusal(lib, media, deps.mediaHosts)
  if (refusal) throw new Error(`received media not downloaded: ${refusal}`)
  const host = media.url ? new URL(media.url).host : undefined
  const url = media.directPath ? lib.getUrlFromDirectPath(media.directPath, host) : media.url!
  const keys = await lib.getMediaKeys(media.mediaKey!, type.replace('Message', '') as MediaType)
  const { status, body } = await httpGetStream(url, {
    agent: deps.agent,
    timeoutMs: deps.timeoutMs,
    ...(whole ? {} : { bodyIdleMs: deps.timeoutMs }),
    // The encrypted file: the media padded to whole AES blocks (up to 16 bytes more), then a 10-byte MAC.
    maxBytes: deps.maxBytes === undefined ? 2 ** 31 - 1 : deps.maxBytes + 16 + MAC_BYTES,
    headers: { Origin: lib.DEFAULT_ORIGIN },
  })
  if (status !== 200) {
    body.destroy()
    throw Object.assign(new Error(`media download answered ${status}`), { status })
  }
  return pipeline(body, decrypting(keys), () => undefined)
}

/** Decrypts an encrypted media file as it passes, and fails at its end unless its MAC matches (the last plaintext block comes after the check). */
function decrypting(keys: { cipherKey: Uint8Array; iv: Uint8Array; macKey?: Uint8Array }): Transform {
  const hmac = createHmac('sha256', keys.macKey!).update(keys.iv)
  const decipher = createDecipheriv('aes-256-cbc', keys.cipherKey, keys.iv)
  let tail = Buffer.alloc(0) // the last bytes seen: the MAC, once the file has ended
  let size = 0
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length
      const data = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk
      const ciphertext = data.subarray(0, Math.max(0, data.length - MAC_BYTES))
      tail = Buffer.from(data.subarray(ciphertext.length))
      hmac.update(ciphertext)
      done(null, decipher.update(ciphertext))
    },
    flush(done) {
      if (size < 16 + MAC_BYTES || (size - MAC_BYTES) % 16 !== 0) return done(new Error('the media file is truncated'))
      const mac = hmac.digest().subarray(0, MAC_BYTES)
      if (!timingSafeEqual(mac, tail)) return done(new Error('the media file failed its integrity check'))
      try {
        done(null, decipher.final())
      } catch (error) {
        done(error as Error)
      }
    },
  })
}
