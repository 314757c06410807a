import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { memoryTransport, simulatorServer } from '../../adapters/transport-memory/index.ts'
import { TransportError } from '../../src/ports/transport.ts'
import { startGateway } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'
import { freePort } from '../helpers/standalone.ts'

/**
 * A gateway whose memory transport joins a simulator server (`simUrl`, as `npm run sim` and several
 * processes use it): `/health` must see that server go away (its network unreachable: no send can
 * leave) and come back, as it sees the store.
 */
const health = suite('GET /health with the simulated network in another process')

health('answers 503 with the transport check failed while the simulator server is down, 200 again once it is back', async () => {
  const port = await freePort()
  let sim = await simulatorServer({ port, host: '127.0.0.1' })
  const t = await startGateway({ transport: memoryTransport({ simUrl: `http://127.0.0.1:${port}` }), healthTimeoutMs: 2_000 })
  try {
    const up = await request(`${t.url}/health`)
    assert.is(up.status, 200)
    assert.equal([up.body.checks.storage.ok, up.body.checks.transport.ok], [true, true])

    await sim.close()
    const down = await request(`${t.url}/health`)
    assert.is(down.status, 503)
    assert.is(down.body.message, 'Gateway indisponível.')
    assert.equal([down.body.checks.storage.ok, down.body.checks.transport.ok], [true, false])

    sim = await simulatorServer({ port, host: '127.0.0.1' })
    const back = await request(`${t.url}/health`)
    assert.is(back.status, 200)
    assert.equal([back.body.checks.storage.ok, back.body.checks.transport.ok], [true, true])
  } finally {
    await t.stop()
    await sim.close()
  }
})

health("the transport's ping throws unreachable when no server answers at simUrl; with an in-process network it answers", async () => {
  const remote = memoryTransport({ simUrl: `http://127.0.0.1:${await freePort()}` })
  try {
    await remote.ping()
    assert.unreachable('ping resolved with nothing listening')
  } catch (err) {
    assert.instance(err, TransportError)
    assert.is((err as TransportError).code, 'unreachable')
  }
  await memoryTransport().ping()
})

health.run()
