import type Router from '@koa/router'
import type { Context, Middleware } from 'koa'
import QRCode from 'qrcode'
import { randomBytes } from 'node:crypto'
import { boolean, nullable, object, string, type Infer } from 'superstruct'
import type { Accounts } from '../domain/accounts.ts'
import type { Device, Devices } from '../domain/devices.ts'
import type { ShareLinks } from '../domain/share-links.ts'
import type { DeviceLeases } from '../domain/cluster/device-leases.ts'
import { escapeHtml } from './render.ts'

/** What the share pages read. */
export interface SharePageDeps {
  links: ShareLinks
  accounts: Pick<Accounts, 'active' | 'get'>
  devices: Devices
  leases: DeviceLeases
}

const POLL_MS = 2000

/** The QR share page of operations 3 and 4 (`GET /qr/:token`: the live QR until the device connects) and its JSON feed (`/state`); 404 once expired or revoked. */
export function sharePageRoutes(router: Router, services: SharePageDeps, boundary: Middleware): void {
  router.get('/qr/:token', boundary, async (ctx: Context) => {
    const link = await linkedDevice(ctx, services, `<!doctype html><meta charset="utf-8"><title>Link inválido</title><p>${GONE}</p>`)
    if (!link) return
    const state = await liveState(link, services)
    const nonce = randomBytes(16).toString('base64')
    ctx.set('Content-Security-Policy', `default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'nonce-${nonce}'; connect-src 'self'`)
    ctx.type = 'text/html; charset=utf-8'
    ctx.body = page(link.device.name, state, nonce)
  })
  router.get('/qr/:token/state', boundary, async (ctx: Context) => {
    const link = await linkedDevice(ctx, services, { status: 404, message: GONE })
    if (link) ctx.body = await liveState(link, services)
  })
}

/** What the page shows (its `/state` body), only what linking needs (never the phone number: whoever holds the link may not own the account): connected, or the current QR as a data URI. */
export const pageState = object({ conectado: boolean(), qrcode: nullable(string()) })

// --- Internal helpers ---

async function liveState({ device, spent }: { device: Device; spent: boolean }, { leases, devices, links }: SharePageDeps): Promise<Infer<typeof pageState>> {
  // The session lives on the instance holding the device: any other one shows what it stored. A linked device nobody holds is opened here with its credentials, never linked anew.
  const here = leases.holds(device.id) || ((await leases.holder(device.id)) === undefined && (await leases[device.linked ? 'open' : 'acquire'](device.id)))
  // A link whose device has connected since it was made is spent: it says so and never shows a QR again.
  const status = here ? await devices.status(device) : device
  if (spent || status.connected) return { conectado: true, qrcode: null }
  let qr = await links.currentQr(device.id)
  // A pairing code pending (operation 3 with phone): a QR link would void the code the user is typing.
  if (!qr && here && !device.linked && !(status.state === 'linking' && (await links.awaitsCode(device.id)))) {
    // The last QR expired: ask the transport for a fresh one (the page is the user waiting to scan).
    const challenge = await devices.link(device).catch(() => undefined)
    qr = challenge?.kind === 'qr' ? challenge.qr : undefined
    if (qr) await links.rememberQr(device.id, qr)
  }
  return { conectado: false, qrcode: qr ? await QRCode.toDataURL(qr, { margin: 2, scale: 6 }) : null }
}

/** The device of the request's link, the pages' headers set; none (answered 404 with `revoked`) for an unknown, expired or revoked link, or one of a suspended or expired account (whose key is refused: its devices are not linked either). */
async function linkedDevice(ctx: Context, { links, accounts }: SharePageDeps, revoked: string | object) {
  const found = await links.resolve(String(ctx.params.token))
  const link = found && accounts.active(await accounts.get(found.device.accountId)) ? found : undefined
  ctx.set({
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'X-Robots-Tag': 'noindex',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
  })
  if (!link) {
    ctx.status = 404
    ctx.body = revoked // an HTML page (Koa types a body starting with `<` as text/html) or JSON
  }
  return link
}

/** What a link that shows nothing (any longer) says. */
const GONE = 'Link inválido, expirado ou excluído.'

function page(name: string, state: Infer<typeof pageState>, nonce: string): string {
  const initial = JSON.stringify(state).replace(/</g, '\\u003c')
  return `<!doctype html>
<html lang="pt-BR">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Conectar ${escapeHtml(name)}</title>
<style>
  body { font-family: system-ui, sans-serif; display: flex; flex-direction: column; align-items: center; margin: 2rem; color: #1b1b1b; }
  #qr { width: 300px; height: 300px; image-rendering: pixelated; }
  #connected { font-size: 1.4rem; color: #0a7a32; }
  [hidden] { display: none !important; }
</style>
</head>
<body>
<h1>Conectar ${escapeHtml(name)}</h1>
<p id="hint">Abra o WhatsApp no celular, toque em Aparelhos conectados e escaneie o código.</p>
<img id="qr" alt="QR code" hidden>
<p id="waiting" hidden>Gerando um novo QR code…</p>
<p id="connected" hidden>Dispositivo conectado.</p>
<script nonce="${nonce}">
const url = location.pathname.replace(/\\/$/, '') + '/state'
function show(s) {
  const qr = document.getElementById('qr')
  document.getElementById('connected').hidden = !s.conectado
  document.getElementById('hint').hidden = s.conectado
  document.getElementById('waiting').hidden = s.conectado || !!s.qrcode
  qr.hidden = s.conectado || !s.qrcode
  if (s.qrcode && qr.getAttribute('src') !== s.qrcode) qr.setAttribute('src', s.qrcode)
  document.body.dataset.state = s.conectado ? 'connected' : 'waiting'
}
async function poll() {
  try {
    const r = await fetch(url, { cache: 'no-store' })
    if (r.status === 404) { document.body.innerHTML = '<p>${GONE}</p>'; document.body.dataset.state = 'revoked'; return }
    const s = await r.json()
    show(s)
    if (s.conectado) return
  } catch (e) {}
  setTimeout(poll, ${POLL_MS})
}
show(${initial})
if (!${state.conectado}) setTimeout(poll, ${POLL_MS})
</script>
</body>
</html>`
}
