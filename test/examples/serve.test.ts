import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import Koa from 'koa'
import { createGateway } from '../../src/index.ts'
import { memoryTransport } from '../../adapters/transport-memory/index.ts'
import { serve } from '../../examples/serve.ts'

const test = suite('examples/serve.ts')

test('serve() answers on the URL it returns, and nothing listens there after stop()', async () => {
  const gateway = await createGateway({ transport: memoryTransport() })
  const app = new Koa().use(gateway.routes())
  const { url, stop } = await serve(app, 0, gateway)
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/)
  const answer = await fetch(`${url}/api/auth`, { method: 'POST' })
  assert.equal(await answer.json(), { status: 401, message: 'validation.required' })
  await stop()
  const refused = await fetch(`${url}/api/auth`, { method: 'POST' }).then(
    () => false,
    () => true,
  )
  assert.ok(refused, 'the port is closed')
})

test.run()
