import { loadBaileys, type Baileys } from './baileys.ts'

/**
 * Make Baileys (in this process) trust `rootPublicKey` as WhatsApp's certificate root; returns the
 * function that restores the real root. Baileys keeps the root in a module-level constant, so while
 * it is installed every Baileys socket of the process trusts that peer and not WhatsApp.
 */
export function trustRootKey(lib: Baileys, rootPublicKey: Uint8Array): () => void {
  const details = lib.WA_CERT_DETAILS
  const real = details.PUBLIC_KEY
  details.PUBLIC_KEY = Buffer.from(rootPublicKey)
  return () => void (details.PUBLIC_KEY = real)
}

/** A peer server joined from another process: where Baileys connects, and how to stop trusting it. */
export interface JoinedWaPeer {
  /** `ws://host:port/ws/chat`, for Baileys' `socketConfig.waWebSocketUrl`. */
  webSocketUrl: string
  /** Restore WhatsApp's real certificate root in this process. */
  restoreRoot(): void
}

/**
 * Join a peer server (`npm run wa-peer`, waPeerServer) from a gateway process: read its certificate
 * root from `GET <url>/_peer/root` and make this process's Baileys trust it. For offline tests only:
 * the root comes over plain HTTP from the URL the operator configured.
 */
export async function joinWaPeer(url: string): Promise<JoinedWaPeer> {
  const base = new URL(url)
  const answer = await fetch(new URL('/_peer/root', base), { signal: AbortSignal.timeout(10_000) })
  const body = (await answer.json().catch(() => undefined)) as { publicKey?: unknown } | undefined
  const key = typeof body?.publicKey === 'string' ? Buffer.from(body.publicKey, 'base64') : undefined
  if (!answer.ok || key?.length !== 32) throw new Error(`${base.origin} is not a WhatsApp peer server (GET /_peer/root answered ${answer.status})`)
  const restoreRoot = trustRootKey(await loadBaileys(), key)
  return { webSocketUrl: waPeerWebSocketUrl(url), restoreRoot }
}

/** Where Baileys connects to the peer server at `url` (`ws://host:port/ws/chat`). */
export function waPeerWebSocketUrl(url: string): string {
  const base = new URL(url)
  return `${base.protocol === 'https:' ? 'wss' : 'ws'}://${base.host}/ws/chat`
}
