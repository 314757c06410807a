import { Readable } from 'node:stream'
import type { Context } from 'koa'
import type { DeviceLeases } from '../../domain/cluster/device-leases.ts'
import { moving } from '../../domain/cluster/session-routing.ts'
import type { Instances } from '../../domain/instances.ts'

/** Marks a media request one instance relayed to another: it is answered there, never relayed again. */
export const MEDIA_RELAY_HEADER = 'x-zapgate-media-relay'

const RELAY_TIMEOUT_MS = 120_000

/** The holder's headers a relayed answer keeps (the media route's own security headers among them; a 503's Retry-After). */
const RELAYED = ['content-type', 'content-length', 'content-disposition', 'content-security-policy', 'x-content-type-options', 'cache-control', 'retry-after']

/** Cluster mode: fetch media from the live instance holding its device (same token) and stream it back; false when none or relayed, 503 if unreachable. */
export async function relayMediaToHolder(
  ctx: Context,
  token: string,
  deviceId: string,
  leases: DeviceLeases,
  instances: Instances | undefined,
): Promise<boolean> {
  if (!instances || ctx.get(MEDIA_RELAY_HEADER)) return false
  const holder = await leases.holder(deviceId)
  if (holder === undefined || holder === leases.me) return false
  const url = (await instances.recordOf(holder))?.url
  if (!url) return false
  // The wait bounds the holder's answer, not the download: a long file streams as long as its bytes keep coming (as the holder's own answer does).
  const wait = AbortSignal.timeout(RELAY_TIMEOUT_MS)
  const relay = new AbortController()
  const waited = () => relay.abort(wait.reason)
  wait.addEventListener('abort', waited)
  const response = await fetch(`${url.replace(/\/+$/, '')}/media/${encodeURIComponent(token)}`, {
    headers: { [MEDIA_RELAY_HEADER]: instances.id },
    redirect: 'manual',
    signal: relay.signal,
  })
    .catch(cause => {
      throw moving(cause)
    })
    .finally(() => wait.removeEventListener('abort', waited))
  ctx.status = response.status
  for (const name of RELAYED) {
    const value = response.headers.get(name)
    if (value !== null) ctx.set(name, value)
  }
  ctx.body = response.body ? Readable.fromWeb(response.body as import('node:stream/web').ReadableStream) : ''
  return true
}
