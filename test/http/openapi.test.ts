import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import Koa from 'koa'
import Router from '@koa/router'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { compileErrors, validate } from '@readme/openapi-parser'
import { createGateway } from '../../src/index.ts'
import { operations, operationTable } from '../../src/operations/table.ts'
import { memoryTransport } from '../../adapters/transport-memory/index.ts'
import { distinguishingFields as fieldsOf, operationsOf } from '../../src/operations/operation.ts'
import { operationAnswer } from '../../src/http/openapi.ts'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'
import { listen, post, request } from '../helpers/http.ts'
import { requestMatcher } from '../helpers/openapi.ts'

type Document = {
  openapi: string
  servers: { url: string }[]
  paths: Record<string, any>
  components: { schemas: Record<string, any> }
}
type Ctx = { t: TestGateway; document: Document }
const docs = suite<Ctx>('OpenAPI document and docs page')
docs.before(async ctx => {
  ctx.t = await startGateway()
  ctx.document = (await request(`${ctx.t.url}/openapi.json`)).body
})
docs.after(ctx => ctx.t.stop())

docs('is a valid OpenAPI 3.1 document for an independent validator', async ({ document }) => {
  assert.is(document.openapi, '3.1.0')
  const result = await validate(structuredClone(document) as never)
  assert.ok(result.valid, result.valid ? '' : compileErrors(result))
})

docs('has every path of the table, each operation as a oneOf branch with its field, precedence and answer', ({ document }) => {
  for (const entry of operationTable) {
    const post = document.paths[entry.path]?.post
    assert.ok(post, `${entry.path} is documented`)
    const ordered = operationsOf(entry)
    const refs = post.requestBody.content['application/json'].schema.oneOf.map((branch: { $ref: string }) => branch.$ref.split('/').pop())
    assert.is(refs.length, ordered.length, `${entry.path}: one branch per operation`)
    ordered.forEach((operation, index) => {
      const schema = document.components.schemas[refs[index]]
      assert.is(schema.title, operation.name)
      assert.is(schema['x-precedence'], index + 1, `${operation.name} precedence`)
      const field = fieldsOf(operation)
      assert.equal(schema['x-distinguishing-field'], field.length === 0 ? null : field.length === 1 ? field[0] : field, `${operation.name} field`)
      for (const name of field) assert.ok(name in schema.properties, `${operation.name} documents its field ${name}`)
      assert.ok(document.components.schemas[`${operation.name[0].toUpperCase()}${operation.name.slice(1)}Answer`], `${operation.name} answer`)
      assert.ok(post.description.includes(`**${operation.name}**`))
      for (const error of ['invalid-input' as const, ...operation.errors].map(code => operationAnswer(operation, code))) {
        const examples = Object.values(post.responses[String(error.status)]?.content['application/json'].examples ?? {}) as { value: { message: string } }[]
        assert.ok(
          examples.some(example => example.value.message === error.message),
          `${operation.name} documents ${error.status} ${error.message}`,
        )
      }
    })
  }
})

docs('documents the service routes: share page, media links, health and the docs themselves', ({ document }) => {
  for (const path of ['/qr/{token}', '/qr/{token}/state', '/media/{token}', '/health', '/openapi.json', '/docs']) assert.ok(document.paths[path]?.get, path)
  const media = document.paths['/media/{token}'].get
  assert.equal(
    media.parameters.map((p: { name: string; in: string }) => [p.name, p.in]),
    [['token', 'path']],
  )
  assert.equal(Object.keys(media.responses).sort(), ['200', '404', '500', '502', '503', '504'])
  assert.equal(media.responses['200'].content['*/*'].schema, { type: 'string', format: 'binary' })
  for (const [path, item] of Object.entries(document.paths))
    if (item.get) assert.ok(item.get.responses['503'].headers?.['Retry-After'], `${path} 503 Retry-After`)
  assert.is(document.paths['/metrics'], undefined, 'no /metrics while metrics are off')
})

docs('every answer that carries Retry-After (429 quota and rate limits, 503 shutting down, holder unavailable, instance full) documents it', ({ document }) => {
  const retryAfter = (response: any) => response?.headers?.['Retry-After']
  const codes = ['rate-limited', 'shutting-down', 'storage-unavailable'] as const
  for (const entry of operationTable)
    for (const operation of operationsOf(entry))
      for (const code of [...operation.errors, ...codes, ...(operation.device?.session ? (['holder-unavailable', 'instance-full'] as const) : [])]) {
        const { status, retryAfterSeconds } = operationAnswer(operation, code)
        if (retryAfterSeconds !== undefined) assert.ok(retryAfter(document.paths[entry.path].post.responses[status]), `${operation.name} ${code}`)
      }
  const sends = document.paths['/api/create-message'].post.responses
  assert.equal(retryAfter(sends['429']), { description: 'Seconds after which a retry may succeed.', schema: { type: 'integer', minimum: 1 } })
  assert.ok(retryAfter(sends['503']), '503: shutting down, holder unavailable, instance full')
  for (const status of ['200', '401', '404']) assert.is(retryAfter(sends[status]), undefined, status)
})

docs('the table and the exported operations list the same operations', () => {
  const inTable = operationTable
    .flatMap(operationsOf)
    .map(operation => operation.name)
    .sort()
  assert.equal(inTable, Object.keys(operations).sort())
  for (const [name, operation] of Object.entries(operations)) assert.is(operation.name, name)
})

docs("a path's oneOf matches exactly the operation the router's precedence chooses", async ({ document }) => {
  const matches = await requestMatcher(document as never)
  const keys = { appkey: 'loja', authkey: 'k', to: '5511988880002' }
  const button = { type: 'replyButton', displaytext: 'Sim' }
  assert.equal(matches('/api/create-message', { ...keys, message: 'oi' }), ['sendText'])
  assert.equal(matches('/api/create-message', { ...keys, file: 'https://example.com/a.pdf', message: 'a.pdf' }), ['sendMedia'])
  assert.equal(matches('/api/create-message', { ...keys, message: 'x', buttons: [button], file: 'https://example.com/a.pdf' }), ['sendButtons'])
  assert.equal(matches('/api/create-message', { ...keys, message: 'x', buttons: [button], file: '  ' }), ['sendButtons'], 'a blank field is absent')
  assert.equal(
    matches('/api/create-message', { ...keys, buttons: [button], contact: 'Ana' }),
    [],
    'an invalid body of the chosen operation (no message) matches nothing',
  )
  assert.equal(matches('/api/create-message', { ...keys, latitude: '-23.5', longitude: '-46.6' }), ['sendLocation'])
  assert.equal(matches('/api/developer', { authkey: 'k', message: 'loja', conecteQR: 'true', checkDispositivo: 'true' }), ['addDevice'])
  assert.equal(matches('/api/developer', { authkey: 'k', message: 'loja', checkDispositivo: '1' }), ['deviceStatus'])
  assert.equal(matches('/api/developer', { authkey: 'k', message: 'loja' }), [], 'no distinguishing field, no default')
  assert.equal(matches('/api/groups', { ...keys, message: 'false', infoConvite: 'x', entrarConvite: 'y' }), ['groupInfo'])
})

docs('a blank required text (spaces, a tab, a newline) matches no branch, as the gateway refuses it', async ({ t, document }) => {
  const matches = await requestMatcher(document as never)
  const { authkey } = await t.register()
  await t.linkedDevice(authkey, 'brancos', '5511999990008')
  for (const message of [' ', '\t\n ']) {
    const body = { appkey: 'brancos', authkey, to: '5511988880002', message }
    assert.equal((await t.post('/api/create-message', body)).body, { status: 401, message: 'validation.required' })
    assert.equal(matches('/api/create-message', body), [], JSON.stringify(message))
    assert.equal(matches('/api/create-message', { ...body, message: ` ${message}oi` }), ['sendText'])
  }
})

docs(
  'a text as long as the document allows is taken: a length counts characters (code points, as maxLength does), an emoji as one',
  async ({ t, document }) => {
    const matches = await requestMatcher(document as never)
    const schemas = document.components.schemas
    const emoji = '🎉' // one character, two UTF-16 code units
    const nome = emoji.repeat(schemas.RegisterUserRequest.properties.nome.maxLength)
    const { authkey } = await t.register({ nome })
    await t.linkedDevice(authkey, 'rotulos', '5511999990007')
    const label = schemas.SendButtonsRequest.properties.buttons.anyOf[0].items.oneOf[0].properties.displaytext
    const body = {
      appkey: 'rotulos',
      authkey,
      to: '5511988880002',
      message: 'Escolha',
      buttons: [{ type: 'replyButton', displaytext: emoji.repeat(label.maxLength) }],
    }
    assert.equal(matches('/api/create-message', body), ['sendButtons'])
    assert.equal((await t.post('/api/create-message', body)).body.status, 200)
    const over = { ...body, buttons: [{ type: 'replyButton', displaytext: emoji.repeat(label.maxLength + 1) }] }
    assert.equal(matches('/api/create-message', over), [])
    assert.equal((await t.post('/api/create-message', over)).body, { status: 401, message: 'validation.required' })
  },
)

docs('an OTP send the gateway refuses (scheduled, a template without {code}, to a group) matches no branch', async ({ t, document }) => {
  const matches = await requestMatcher(document as never)
  const { authkey } = await t.register()
  await t.linkedDevice(authkey, 'codigos', '5511999990009')
  const otp = { appkey: 'codigos', authkey, to: '5511988880002', enviarOTP: 'true' }
  assert.equal(matches('/api/create-message', { ...otp, message: 'Seu código: {code}', agendamento: ' ' }), ['sendOtp'])
  for (const refused of [{ agendamento: '2030-01-01 10:00:00' }, { message: 'Seu código chegou' }, { to: '120363000000000001@g.us' }]) {
    const body = { ...otp, ...refused }
    assert.equal((await t.post('/api/create-message', body)).body, { status: 401, message: 'validation.required' }, JSON.stringify(refused))
    assert.equal(matches('/api/create-message', body), [], JSON.stringify(refused))
  }
})

docs('the server URL is the request origin and mount prefix; the document answers under a prefix', async () => {
  const gateway = await createGateway({ transport: memoryTransport() })
  const host = new Router()
  host.use('/whatsapp', gateway.router.routes(), gateway.router.allowedMethods())
  const app = new Koa()
  app.use(host.routes())
  const server = await listen(app)
  try {
    const answer = await request(`${server.url}/whatsapp/openapi.json`)
    assert.is(answer.status, 200)
    assert.equal(answer.body.servers, [{ url: `${server.url}/whatsapp` }])
    const page = await request(`${server.url}/whatsapp/docs`)
    assert.ok(page.text.includes('data-spec="/whatsapp/openapi.json"'))
    assert.ok(page.text.includes('src="/whatsapp/docs/swagger-ui-bundle.js"'))
  } finally {
    await server.stop()
    await gateway.close()
  }
})

docs('the mount prefix is the one the client called: under a mount that strips it from ctx.path (koa-mount), in another case', async () => {
  const gateway = await createGateway({ transport: memoryTransport() })
  const app = new Koa()
  app.use(async (ctx, next) => {
    if (!ctx.path.startsWith('/whatsapp/')) return next()
    const path = ctx.path // as koa-mount does: the prefix off ctx.path while the mounted middleware runs
    ctx.path = path.slice('/whatsapp'.length)
    await gateway.routes()(ctx, next)
    ctx.path = path
  })
  const server = await listen(app)
  try {
    assert.equal((await request(`${server.url}/whatsapp/openapi.json`)).body.servers, [{ url: `${server.url}/whatsapp` }])
    const registered = await post(`${server.url}/whatsapp/api/auth`, {
      auth: 'registrar',
      nome: 'M',
      email: 'mount@example.com',
      senha: 'segredo1',
      telefone: '5511912345678',
      plano: '1',
    })
    const device = await post(`${server.url}/whatsapp/API/Developer`, { authkey: registered.body.data.authkey, message: 'loja', conecteQR: 'true' })
    assert.match(device.body.link, new RegExp(`^${server.url}/whatsapp/qr/`), 'the QR link under the prefix, as the router matched the path')
  } finally {
    await server.stop()
    await gateway.close()
  }
})

docs('/docs is Swagger UI from the installed swagger-ui-dist, under a CSP that allows only its own files', async ({ t }) => {
  const page = await request(`${t.url}/docs`)
  assert.is(page.status, 200)
  const csp = page.headers.get('content-security-policy') ?? ''
  assert.match(csp, /default-src 'none'/)
  assert.match(csp, /script-src 'self';/)
  assert.not.match(page.text, /https?:\/\//, 'no external URL: no CDN')
  const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))
  for (const file of ['swagger-ui-bundle.js', 'swagger-ui.css']) {
    const asset = await request(`${t.url}/docs/${file}`)
    assert.is(asset.status, 200)
    assert.is(asset.text, readFileSync(join(dist, file), 'utf8'), `${file} is the package's file`)
  }
  assert.match((await request(`${t.url}/docs/start.js`)).text, /SwaggerUIBundle\(/)
  assert.is((await request(`${t.url}/docs/package.json`)).status, 404, 'only the listed files are served')
})

docs('docs: false serves neither the document nor the page', async () => {
  const t = await startGateway({ docs: false })
  try {
    assert.is((await request(`${t.url}/openapi.json`)).status, 404)
    assert.is((await request(`${t.url}/docs`)).status, 404)
    assert.is((await request(`${t.url}/health`)).status, 200, 'health stays on')
  } finally {
    await t.stop()
  }
})

docs.run()
