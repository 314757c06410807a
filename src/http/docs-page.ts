import type Router from '@koa/router'
import type { Context } from 'koa'
import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { PathEntry } from '../operations/operation.ts'
import { openApiDocument } from './openapi.ts'
import type { ServiceRouteFlags } from './openapi-routes.ts'
import { isInstalled } from '../optional-package.ts'

/**
 * `GET /openapi.json` (the document generated from the operation table, its server URL the
 * request's origin and mount path or the `baseUrl` option) and `GET /docs`, a Swagger UI page whose
 * files are served from the installed swagger-ui-dist package (no CDN), under a strict CSP. Without
 * that optional package, `/docs` is a short page that links the document and says how to get the UI.
 */
export function docsRoutes(router: Router, baseUrl: string | undefined, table: readonly PathEntry[], flags: ServiceRouteFlags): void {
  let document: Record<string, unknown> | undefined
  router.get('/openapi.json', (ctx: Context) => {
    // Generated on first use (walking the structs takes a moment), then kept.
    document ??= openApiDocument(table, { ...flags, version: packageVersion() })
    ctx.set('Cache-Control', 'no-cache')
    ctx.set('Access-Control-Allow-Origin', '*')
    ctx.body = { ...document, servers: [{ url: baseUrl ?? `${ctx.protocol}://${ctx.host}${mountPrefix(ctx, '/openapi.json')}` }] }
  })
  router.get('/docs', (ctx: Context) => {
    const prefix = mountPrefix(ctx, '/docs')
    pageHeaders(ctx)
    ctx.type = 'text/html; charset=utf-8'
    ctx.body = (swaggerInstalled ??= isInstalled(SWAGGER_UI)) ? page(prefix) : installPage(prefix)
  })
  router.get('/docs/:asset', async (ctx: Context) => {
    const name = String(ctx.params.asset)
    // Own keys only: `constructor`, `__proto__` or `toString` must not find Object.prototype's members.
    const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined
    if (!asset || (asset.file && !(swaggerInstalled ??= isInstalled(SWAGGER_UI)))) return
    ctx.set('Cache-Control', 'public, max-age=3600')
    ctx.set('X-Content-Type-Options', 'nosniff')
    ctx.type = asset.type
    ctx.body = asset.text ?? (await swaggerFile(asset.file!))
  })
}

// --- Internal helpers ---

/** What the docs page loads: swagger-ui-dist's files and its own start-up script. */
const ASSETS: Record<string, { type: string; file?: string; text?: string }> = {
  'swagger-ui.css': { type: 'text/css; charset=utf-8', file: 'swagger-ui.css' },
  'swagger-ui-bundle.js': { type: 'application/javascript; charset=utf-8', file: 'swagger-ui-bundle.js' },
  'favicon-32x32.png': { type: 'image/png', file: 'favicon-32x32.png' },
  'start.js': {
    type: 'application/javascript; charset=utf-8',
    text: `window.addEventListener('load', function () {
  var root = document.getElementById('swagger-ui')
  window.ui = SwaggerUIBundle({ url: root.dataset.spec, dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null, defaultModelsExpandDepth: 0, docExpansion: 'list' })
})
`,
  },
}

/** The optional peer package the docs page is made of; whether it is installed, once known. */
const SWAGGER_UI = 'swagger-ui-dist'
let swaggerInstalled: boolean | undefined

const files = new Map<string, Promise<Buffer>>()

/** A file of the installed swagger-ui-dist, read once. */
function swaggerFile(name: string): Promise<Buffer> {
  let file = files.get(name)
  if (!file) {
    const root = dirname(createRequire(import.meta.url).resolve(`${SWAGGER_UI}/package.json`))
    file = readFile(join(root, name))
    files.set(name, file)
  }
  return file
}

/** The part of the request path before `route` (the prefix the gateway is mounted under). */
function mountPrefix(ctx: Context, route: string): string {
  const path = ctx.path.replace(/\/+$/, '')
  return path.endsWith(route) ? path.slice(0, -route.length) : ''
}

function pageHeaders(ctx: Context): void {
  ctx.set(
    'Content-Security-Policy',
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  )
  ctx.set('Referrer-Policy', 'no-referrer')
  ctx.set('X-Content-Type-Options', 'nosniff')
  ctx.set('X-Frame-Options', 'DENY')
}

function page(prefix: string): string {
  const attr = (value: string) => value.replace(/[&<>"']/g, c => `&#${c.charCodeAt(0)};`)
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>zapgate API</title>
<link rel="icon" type="image/png" href="${attr(prefix)}/docs/favicon-32x32.png">
<link rel="stylesheet" href="${attr(prefix)}/docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui" data-spec="${attr(prefix)}/openapi.json"></div>
<script src="${attr(prefix)}/docs/swagger-ui-bundle.js"></script>
<script src="${attr(prefix)}/docs/start.js"></script>
</body>
</html>`
}

/** The page `/docs` answers without swagger-ui-dist: where the document is, and how to get the UI. */
function installPage(prefix: string): string {
  const attr = (value: string) => value.replace(/[&<>"']/g, c => `&#${c.charCodeAt(0)};`)
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>zapgate API</title></head>
<body>
<h1>zapgate API</h1>
<p>The OpenAPI document is at <a href="${attr(prefix)}/openapi.json">${attr(prefix)}/openapi.json</a>.</p>
<p>This page shows it with Swagger UI once the optional package ${SWAGGER_UI} is installed beside zapgate: <code>npm install ${SWAGGER_UI}@^5</code>, then restart.</p>
</body>
</html>`
}

let version: string | undefined

/** The version of this package (its package.json, found by walking up from this file). */
function packageVersion(): string {
  if (version) return version
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string }
      if (pkg.name === 'zapgate' && pkg.version) return (version = pkg.version)
    } catch {
      // no package.json here: keep walking up
    }
    const parent = dirname(dir)
    if (parent === dir) return (version = '0.0.0')
    dir = parent
  }
}
