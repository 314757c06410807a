import type { WAVersion } from '@whiskeysockets/baileys'
import type { Logger } from 'zapgate'
import type { BaileysModule } from './types.ts'

/**
 * The default version resolver: `WA_VERSION` (`2.3000.1234567890` or `2,3000,1234567890`) when set,
 * else the current WhatsApp Web version (5 s timeout), else undefined so that Baileys uses its bundled
 * one. A stale version makes WhatsApp close the socket with 405 before any QR.
 */
export function defaultVersionResolver(lib: BaileysModule, logger: Logger, env: NodeJS.ProcessEnv = process.env): () => Promise<WAVersion | undefined> {
  return async () => {
    const pinned = parseVersion(env.WA_VERSION)
    if (pinned) return pinned
    const latest = await lib.fetchLatestWaWebVersion({ signal: AbortSignal.timeout(5_000) })
    if (latest.isLatest) return latest.version
    logger.warn({ error: String(latest.error ?? '') }, 'could not read the current WhatsApp Web version; using the bundled one')
    return undefined
  }
}

/** A version triple from text, or undefined. */
export function parseVersion(text: string | undefined): WAVersion | undefined {
  const parts = text?.trim().split(/[.,]/).map(Number)
  return parts?.length === 3 && parts.every(n => Number.isInteger(n) && n >= 0) ? (parts as WAVersion) : undefined
}

/** Resolves the version once and keeps it until invalidated (after a 405 close). */
export class VersionSource {
  private pending?: Promise<WAVersion | undefined>

  constructor(private readonly resolve: () => Promise<WAVersion | undefined>) {}

  /** The version to announce; undefined means Baileys' bundled one. Never throws. */
  get(): Promise<WAVersion | undefined> {
    this.pending ??= this.resolve().catch(() => undefined)
    return this.pending
  }

  /** Forget the version: WhatsApp refused it. */
  invalidate(): void {
    this.pending = undefined
  }
}
