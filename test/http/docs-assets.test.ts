import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fsPromises from 'node:fs/promises'
import { syncBuiltinESMExports } from 'node:module'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'

const test = suite<{ t: TestGateway }>('docs page: the Swagger UI files')

test.before(async ctx => {
  ctx.t = await startGateway()
})
test.after(ctx => ctx.t.stop())

// The files are read by docs-page.ts's `readFile` of node:fs/promises: replaced here (the builtin's ESM
// binding synced to it) to fail once, as a passing EMFILE or EIO would, then to read again.
test('a failed read of a Swagger UI file is answered {status, message}, not remembered: the next request serves the file', async ({ t }) => {
  const real = fsPromises.readFile
  let failures = 0
  fsPromises.readFile = ((path: Parameters<typeof real>[0], ...rest: any[]) => {
    if (String(path).endsWith('swagger-ui.css') && failures++ === 0)
      return Promise.reject(Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' }))
    return (real as any)(path, ...rest)
  }) as typeof real
  syncBuiltinESMExports()
  try {
    const failed = await request(`${t.url}/docs/swagger-ui.css`)
    assert.is(failed.status, 500)
    assert.equal(failed.body, { status: 500, message: 'Erro interno.' })
    assert.not.match(failed.headers.get('cache-control') ?? '', /max-age/, 'an error is not cached for an hour')
    const next = await request(`${t.url}/docs/swagger-ui.css`)
    assert.is(next.status, 200, 'the next request reads the file again')
    assert.match(next.headers.get('content-type') ?? '', /text\/css/)
    assert.ok(next.text.length > 1000)
  } finally {
    fsPromises.readFile = real
    syncBuiltinESMExports()
  }
})

test.run()
