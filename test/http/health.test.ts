import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { assert as conforms } from 'superstruct'
import { MemoryNetwork, memoryTransport } from '../../adapters/transport-memory/index.ts'
import { healthAnswer } from '../../src/http/service-routes.ts'
import { startGateway } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'
import { exchange, openSocket } from '../helpers/raw-http.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { internalsOf } from '../../src/internals.ts'

const health = suite('GET /health')

health('answers 200 when the store and the transport answer, in the documented shape', async () => {
  const t = await startGateway()
  try {
    const answer = await request(`${t.url}/health`)
    assert.is(answer.status, 200)
    assert.is(answer.headers.get('cache-control'), 'no-store')
    conforms(answer.body, healthAnswer)
    assert.equal(
      { ...answer.body, checks: { storage: answer.body.checks.storage.ok, transport: answer.body.checks.transport.ok }, instance: undefined },
      {
        status: 200,
        message: 'Gateway disponível.',
        checks: { storage: true, transport: true },
        instance: undefined,
      },
    )
    const { instances } = internalsOf(t.gateway)
    assert.equal(answer.body.instance, { id: instances.id, devices: [], live: [{ id: instances.id, devices: 0 }] })
  } finally {
    await t.stop()
  }
})

health('tells the device sessions this instance holds', async () => {
  const t = await startGateway()
  try {
    const { authkey } = await t.register()
    const device = await t.linkedDevice(authkey, 'loja', '5511999990001')
    const { instance } = (await request(`${t.url}/health`)).body
    assert.equal(instance.devices, [device.id])
    assert.equal(
      instance.live.map((live: { devices: number }) => live.devices),
      [1],
    )
  } finally {
    await t.stop()
  }
})

health('answers 503 when the store cannot be reached, even with always200, and says which check failed', async () => {
  let down = false
  const storage = memoryStorage()
  const t = await startGateway({
    httpStatus: 'always200',
    storage: {
      ...storage,
      async ping() {
        if (down) throw new Error('ECONNREFUSED')
      },
    },
  })
  try {
    assert.is((await request(`${t.url}/health`)).status, 200)
    down = true
    const answer = await request(`${t.url}/health`)
    assert.is(answer.status, 503)
    assert.is(answer.body.status, 503)
    assert.is(answer.body.message, 'Gateway indisponível.')
    assert.is(answer.body.checks.storage.ok, false)
    assert.is(answer.body.checks.transport.ok, true)
    assert.not.match(answer.text, /ECONNREFUSED/, 'the cause is logged, not shown')
  } finally {
    await t.stop()
  }
})

health("answers 503 when the transport's probe fails or does not answer in time", async () => {
  let probe: () => Promise<void> = async () => {}
  const network = new MemoryNetwork()
  const transport = Object.assign(memoryTransport({ network }), { ping: () => probe() })
  const t = await startGateway({ network, transport, healthTimeoutMs: 50 })
  try {
    assert.is((await request(`${t.url}/health`)).status, 200)
    probe = async () => {
      throw new Error('network down')
    }
    assert.equal((await request(`${t.url}/health`)).body.checks.transport.ok, false)
    probe = () => new Promise(() => {})
    const hung = await request(`${t.url}/health`)
    assert.is(hung.status, 503)
    assert.is(hung.body.checks.transport.ok, false)
    assert.is(hung.body.checks.storage.ok, true)
  } finally {
    await t.stop()
  }
})

health('createGateway refuses a healthTimeoutMs that is not a positive number', async () => {
  for (const healthTimeoutMs of [0, -1, Number.NaN]) {
    await startGateway({ healthTimeoutMs }).then(
      t => t.stop().then(() => assert.unreachable(`accepted ${healthTimeoutMs}`)),
      (err: Error) => assert.match(err.message, /healthTimeoutMs must be a positive number/),
    )
  }
})

health('a store without ping is probed with a read: 503 while its reads fail', async () => {
  let down = false
  const storage = memoryStorage()
  const failing = { ...storage, ping: undefined, get: <T>(key: string) => (down ? Promise.reject(new Error('ECONNREFUSED')) : storage.get<T>(key)) }
  const t = await startGateway({ storage: failing })
  try {
    assert.is((await request(`${t.url}/health`)).status, 200)
    down = true
    const answer = await request(`${t.url}/health`)
    assert.is(answer.status, 503)
    assert.equal(answer.body.checks.storage.ok, false)
  } finally {
    down = false
    await t.stop()
  }
})

health('answers HTTP 503 while the gateway shuts down, even with always200 (load balancers read the code)', async () => {
  const t = await startGateway({ httpStatus: 'always200' })
  const socket = await openSocket(t.url)
  try {
    const get = 'GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n'
    assert.match(await exchange(socket, get), /^HTTP\/1\.1 200/)
    await t.gateway.close()
    const draining = await exchange(socket, get)
    assert.match(draining, /^HTTP\/1\.1 503/)
    assert.match(draining, /\r\nRetry-After: 5\r\n/i)
  } finally {
    socket.destroy()
    await t.stop()
  }
})

health.run()
