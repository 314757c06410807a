import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { readFileSync } from 'node:fs'

const run = promisify(execFile)
const root = new URL('../..', import.meta.url).pathname
const pkg = suite('the published package')

pkg('builds to JavaScript that plain Node 20 imports, without tsx, serving the API and its docs', async () => {
  await run(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', 'tsconfig.build.json'], { cwd: root })
  const script = `
    const { createGateway, GatewayError } = await import('zapgate')
    const { memoryTransport } = await import('zapgate/adapters/transport-memory')
    const { keyvStorage } = await import('zapgate/adapters/storage-keyv')
    const Koa = (await import('koa')).default
    const gateway = await createGateway({ transport: memoryTransport(), storage: keyvStorage() })
    const app = new Koa().use(gateway.routes())
    const server = app.listen(0)
    await new Promise(r => server.once('listening', r))
    const base = 'http://127.0.0.1:' + server.address().port
    const res = await fetch(base + '/api/auth', { method: 'POST' })
    const docs = await (await fetch(base + '/openapi.json')).json()
    const bundle = await fetch(base + '/docs/swagger-ui-bundle.js')
    console.log(JSON.stringify({ status: res.status, body: await res.json(), error: typeof GatewayError, openapi: docs.openapi, version: docs.info.version, bundle: bundle.status }))
    server.close(); await gateway.close()
  `
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: root })
  const { version } = JSON.parse(readFileSync(`${root}package.json`, 'utf8'))
  assert.equal(JSON.parse(stdout), {
    status: 401,
    body: { status: 401, message: 'validation.required' },
    error: 'function',
    openapi: '3.1.0',
    version,
    bundle: 200,
  })
})

pkg.run()
