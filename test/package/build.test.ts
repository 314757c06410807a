import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

const run = promisify(execFile)
const root = new URL('../..', import.meta.url).pathname
const pkg = suite('the published package')

pkg('builds to JavaScript that plain Node 20 imports, without tsx', async () => {
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
    const res = await fetch('http://127.0.0.1:' + server.address().port + '/api/auth', { method: 'POST' })
    console.log(JSON.stringify({ status: res.status, body: await res.json(), error: typeof GatewayError }))
    server.close(); await gateway.close()
  `
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: root })
  assert.equal(JSON.parse(stdout), { status: 401, body: { status: 401, message: 'validation.required' }, error: 'function' })
})

pkg.run()
