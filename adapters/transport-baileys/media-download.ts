import { createDecipheriv, createHmac, timingSafeEqual } from 'node:crypto'
import type { Agent } from 'node:http'
import type { MediaType, WAMessage } from '@whiskeysockets/baileys'
import { httpGet } from './http-get.ts'
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
}

/**
 * Download and decrypt a received media message through a Node agent (the device's proxy). Baileys'
 * downloadMediaMessage reads the file with `fetch`, which only takes undici dispatchers, so through
 * a proxy the adapter fetches the encrypted file itself (node:https with the agent), checks its MAC
 * (HMAC-SHA256 over iv and ciphertext, the last 10 bytes) and decrypts it (AES-256-CBC) with the keys
 * Baileys derives (`getMediaKeys`). A 404 or 410 asks the phone to upload the file again, once.
 */
export async function downloadThroughAgent(message: WAMessage, deps: AgentDownload): Promise<Buffer> {
  try {
    return await fetchAndDecrypt(message, deps)
  } catch (error) {
    const status = (error as { status?: unknown }).status
    if ((status !== 404 && status !== 410) || !deps.socket) throw error
    return fetchAndDecrypt(await deps.socket.updateMediaMessage(message), deps)
  }
}

// --- Internal helpers ---

interface MediaFields {
  url?: string | null
  directPath?: string | null
  mediaKey?: Uint8Array | null
}

async function fetchAndDecrypt(message: WAMessage, deps: AgentDownload): Promise<Buffer> {
  const { lib } = deps
  const content = lib.extractMessageContent(message.message)
  const type = content ? lib.getContentType(content) : undefined
  const media = type ? (content![type] as MediaFields | undefined) : undefined
  if (!type || !media?.mediaKey || !(media.url || media.directPath)) throw new Error('not a downloadable media message')
  const host = media.url ? new URL(media.url).host : undefined
  const url = media.directPath ? lib.getUrlFromDirectPath(media.directPath, host) : media.url!
  const { status, body } = await httpGet(url, {
    agent: deps.agent,
    timeoutMs: deps.timeoutMs,
    // The encrypted file: the media padded to whole AES blocks (up to 16 bytes more), then a 10-byte MAC.
    maxBytes: deps.maxBytes === undefined ? 2 ** 31 - 1 : deps.maxBytes + 26,
    headers: { Origin: lib.DEFAULT_ORIGIN },
  })
  if (status !== 200) throw Object.assign(new Error(`media download answered ${status}`), { status })
  const keys = await lib.getMediaKeys(media.mediaKey!, type.replace('Message', '') as MediaType)
  if (body.length < 26 || (body.length - 10) % 16 !== 0) throw new Error('the media file is truncated')
  const ciphertext = body.subarray(0, -10)
  const mac = createHmac('sha256', keys.macKey!).update(keys.iv).update(ciphertext).digest().subarray(0, 10)
  if (!timingSafeEqual(mac, body.subarray(-10))) throw new Error('the media file failed its integrity check')
  const decipher = createDecipheriv('aes-256-cbc', keys.cipherKey, keys.iv)
  return Buffer.concat([decipher.update(ciphertext), decipher.final()])
}
