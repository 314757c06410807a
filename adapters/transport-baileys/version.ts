import type { Agent } from 'node:http'
import type { WAVersion } from '@whiskeysockets/baileys'
import type { Logger } from 'zapgate'
import { httpGet, networkErrorText } from './http-get.ts'

/** Where the current WhatsApp Web version is read (its service worker carries `client_revision`). */
const VERSION_URL = 'https://web.whatsapp.com/sw.js'

/** Resolves the version to announce; `agent` is the proxy agent of the device that needs it (undefined: direct). */
type VersionResolver = (context: { agent?: Agent }) => Promise<WAVersion | undefined>

/**
 * The default version resolver: `WA_VERSION` (`2.3000.1234567890` or `2,3000,1234567890`) when set,
 * else the `client_revision` of WhatsApp Web's service worker, read through the device's proxy agent
 * (5 s timeout; Baileys' own fetchLatestWaWebVersion uses fetch, which ignores Node agents), else
 * undefined so that Baileys uses its bundled one. A stale version makes WhatsApp close with 405.
 */
export function defaultVersionResolver(logger: Logger, env: NodeJS.ProcessEnv = process.env, url = VERSION_URL): VersionResolver {
  return async ({ agent }) => {
    const pinned = parseVersion(env.WA_VERSION)
    if (pinned) return pinned
    try {
      const headers = {
        'sec-fetch-site': 'none',
        'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
      }
      const { status, body } = await httpGet(url, { agent, timeoutMs: 5_000, headers, maxBytes: 4 * 2 ** 20 })
      const revision = /\\?"client_revision\\?":\s*(\d+)/.exec(body.toString('utf8'))?.[1]
      if (status === 200 && revision) return [2, 3000, Number(revision)]
      logger.warn({ status }, 'the WhatsApp Web version was not in its answer; using the bundled one')
    } catch (err) {
      logger.warn({ error: networkErrorText(err) }, 'could not read the current WhatsApp Web version; using the bundled one')
    }
    return undefined
  }
}

/** A version triple from text, or undefined. */
export function parseVersion(text: string | undefined): WAVersion | undefined {
  const parts = text?.trim().split(/[.,]/).map(Number)
  return parts?.length === 3 && parts.every(n => Number.isInteger(n) && n >= 0) ? (parts as WAVersion) : undefined
}

/** Resolves the version once (through the first caller's agent) and keeps it until invalidated (after a 405 close). */
export class VersionSource {
  private pending?: Promise<WAVersion | undefined>

  constructor(private readonly resolve: VersionResolver) {}

  /** The version to announce; undefined means Baileys' bundled one. Never throws. */
  get(agent?: Agent): Promise<WAVersion | undefined> {
    this.pending ??= this.resolve({ agent }).catch(() => undefined)
    return this.pending
  }

  /** Forget the version: WhatsApp refused it. */
  invalidate(): void {
    this.pending = undefined
  }
}
