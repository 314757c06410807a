import type Router from '@koa/router'
import type { Context, Middleware } from 'koa'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { isInstalled } from '../optional-package.ts'
import type { Logger } from '../logger.ts'
import { answerErrors, escapeHtml, mountPrefix } from './render.ts'

/**
 * `GET /docs`: Swagger UI from the optional swagger-ui-dist package (no CDN) under a strict CSP, else a page saying how to get it.
 * A file that cannot be read is answered 500 `{status, message}` (logged), and read again by the next request.
 */
export function docsPage(router: Router, front: Middleware, logger: Logger): void {
  router.get('/docs', front, (ctx: Context) => {
    const prefix = escapeHtml(mountPrefix(ctx, '/docs'))
    ctx.set(
      'Content-Security-Policy',
      "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    )
    ctx.set({ 'Referrer-Policy': 'no-referrer', 'X-Content-Type-Options': 'nosniff', 'X-Frame-Options': 'DENY' })
    ctx.type = 'text/html; charset=utf-8'
    ctx.body = page(prefix, (swaggerInstalled ??= isInstalled(SWAGGER_UI)))
  })
  router.get('/docs/:asset', front, answerErrors('mirror', logger), async (ctx: Context) => {
    const name = String(ctx.params.asset)
    // Own keys only: `constructor`, `__proto__` or `toString` must not find Object.prototype's members.
    const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined
    if (!asset || (asset.file && !(swaggerInstalled ??= isInstalled(SWAGGER_UI)))) return
    const body = asset.text ?? (await swaggerFile(asset.file!)) // read first: a failed read's answer is not cached for an hour
    ctx.set({ 'Cache-Control': 'public, max-age=3600', 'X-Content-Type-Options': 'nosniff' })
    ctx.type = asset.type
    ctx.body = body
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

const SWAGGER_UI = 'swagger-ui-dist'
let swaggerInstalled: boolean | undefined

const files = new Map<string, Promise<Buffer>>()

/** A file of the installed swagger-ui-dist, read once; a read that fails is forgotten (before, every later request got its failure). */
function swaggerFile(name: string): Promise<Buffer> {
  let read = files.get(name)
  if (!read) {
    read = readFile(join(dirname(createRequire(import.meta.url).resolve(`${SWAGGER_UI}/package.json`)), name))
    files.set(name, read)
    read.catch(() => files.get(name) === read && files.delete(name))
  }
  return read
}

/** The `/docs` page: Swagger UI, or without swagger-ui-dist where the document is and how to get the UI. */
function page(prefix: string, swagger: boolean): string {
  const head = swagger
    ? `\n<link rel="icon" type="image/png" href="${prefix}/docs/favicon-32x32.png">\n<link rel="stylesheet" href="${prefix}/docs/swagger-ui.css">`
    : ''
  const body = swagger
    ? `<div id="swagger-ui" data-spec="${prefix}/openapi.json"></div>
<script src="${prefix}/docs/swagger-ui-bundle.js"></script>
<script src="${prefix}/docs/start.js"></script>`
    : `<h1>zapgate API</h1>
<p>The OpenAPI document is at <a href="${prefix}/openapi.json">${prefix}/openapi.json</a>.</p>
<p>This page shows it with Swagger UI once the optional package ${SWAGGER_UI} is installed beside zapgate: <code>npm install ${SWAGGER_UI}@^5</code>, then restart.</p>`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>zapgate API</title>${head}
</head>
<body>
${body}
</body>
</html>`
}
