import type Router from '@koa/router'
import type { Context, Middleware } from 'koa'
import type { Devices } from '../domain/devices.ts'
import type { Accounts } from '../domain/accounts.ts'
import type { MediaLinks } from '../domain/media-links.ts'
import { cleanName } from '../domain/messaging/media-loader.ts'
import { TransportError, type Transport } from '../ports/transport.ts'
import type { DeviceLeases } from '../domain/cluster/device-leases.ts'
import type { Instances } from '../domain/instances.ts'
import type { Logger } from '../logger.ts'
import { relayMediaToHolder } from './forwarding/media-relay.ts'
import { firstBytes } from './first-bytes.ts'

/** What the media route reads. */
export interface MediaRouteDeps {
  mediaLinks: MediaLinks
  transport: Transport
  devices: Devices
  /** A suspended or expired account's links serve nothing (as its QR links). */
  accounts: Pick<Accounts, 'get' | 'active'>
  leases: DeviceLeases
  cluster?: { instances: Instances }
  logger: Logger
}

/** `GET /media/:token`: received media too large for its webhook event (404 for a bad token, or one of a suspended or expired account), streamed when the transport gives a stream; the sender chose the bytes, so most types are attachments. */
export function mediaRoutes(router: Router, services: MediaRouteDeps, boundary: Middleware): void {
  const { logger } = services
  router.get('/media/:token', boundary, async (ctx: Context) => {
    ctx.set({ 'Cache-Control': 'private, no-store', 'X-Content-Type-Options': 'nosniff', 'Content-Security-Policy': "sandbox; default-src 'none'" })
    const token = String(ctx.params.token)
    const target = await services.mediaLinks.verify(token)
    if (target && (await relayMediaToHolder(ctx, token, target.deviceId, services.leases, services.cluster?.instances))) return
    const device = target && (await services.devices.get(target.deviceId))
    // A suspended or expired account gets nothing in its name: no download by its device's session (as its key and QR links, refused).
    const active = device && services.accounts.active(await services.accounts.get(device.accountId))
    const media = active && (await services.transport.downloadMedia?.(target.deviceId, target.message))
    if (!media) {
      ctx.status = 404
      ctx.body = { status: 404, message: 'Mídia não encontrada ou link expirado.' }
      return
    }
    const type = MEDIA_TYPE.test(media.mimetype ?? '') ? media.mimetype! : 'application/octet-stream' // the sender's word: no bytes a header may not carry
    ctx.type = type
    // The header's whole value decides (`ctx.type` reads back the first type alone: a list after a parameter is a list too).
    const disposition = isInlineSafe(type) ? 'inline' : 'attachment'
    const fileName = cleanName(media.fileName) // as the webhook event shows it: no bidi control to spoof the extension a browser saves
    // The header in ASCII: Node writes a Latin-1 name's bytes as it likes (`ação` went out as `a\xfd\xfdo`); the name itself in `filename*`.
    if (fileName) ctx.attachment(fileName, { type: disposition, fallback: asciiName(fileName) })
    else ctx.set('Content-Disposition', disposition)
    const data = media.data
    if (Buffer.isBuffer(data)) return void (ctx.body = data)
    // A stream is served as it comes; one failing before its first bytes is still a download error (502).
    await firstBytes(data).catch(cause => {
      data.destroy()
      throw new TransportError('failed', 'the media download failed', { cause })
    })
    // Koa pipes a stream body with stream.pipeline: a failure part-way destroys the answer's connection, so the
    // client sees an incomplete answer (no final chunk), never a shorter file that looks whole.
    data.once('error', err => logger.warn({ err, deviceId: target.deviceId }, 'a media download failed while its answer was sent: connection cut'))
    ctx.body = data
  })
}

// --- Internal helpers ---

/** A content type as a header may carry it: `type/subtype`, then parameters of visible ASCII. */
const MEDIA_TYPE = /^[\w.+-]+\/[\w.+-]+(\s*;[\x20-\x7e]*)?$/

/** The name in printable ASCII, for the plain `filename` beside `filename*` (accents dropped, other characters `_`); the name itself when it is ASCII already. */
function asciiName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]/g, '_')
}

/** Whether a browser may show media of this type inline: images (but SVG, which runs scripts), audio, video, PDF and plain text; never a list, whose last type a browser reads ('image/png, text/html'). */
function isInlineSafe(type: string): boolean {
  const mime = type.split(';')[0]!.trim().toLowerCase()
  if (mime === 'image/svg+xml' || mime.includes('xml') || type.includes(',')) return false
  return /^(image|audio|video)\//.test(mime) || mime === 'application/pdf' || mime === 'text/plain'
}
