import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { memoryTransport, MemoryNetwork } from '../../adapters/transport-memory/index.ts'
import { TransportError, type Transport } from '../../src/ports/transport.ts'
import { startGateway } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'
import { declarationChecker } from '../helpers/openapi.ts'

/**
 * Operation 5 through a host's transport whose status call fails: every answer is one the operation
 * declares in the OpenAPI document (docs/api.md), never an undeclared one. A status that throws
 * anything is the network's failure (502), one that never answers its time-out (504), and the network
 * unreachable from this server 503 (SECURITY.md: `guardTransport`, as the sends answer).
 */
test('operation 5 answers a failing transport status call with answers it declares', async () => {
  const network = new MemoryNetwork()
  const inner = memoryTransport({ network })
  let fault: (() => Promise<never>) | undefined
  // No statusNow: the gateway asks `status`, as for a transport that keeps no status in memory.
  const transport = new Proxy(inner, {
    get: (target, name, receiver) => {
      if (name === 'statusNow') return undefined
      if (name === 'status') return (deviceId: string) => (fault ? fault() : target.status(deviceId))
      const value = Reflect.get(target, name, receiver)
      return typeof value === 'function' ? value.bind(target) : value
    },
  }) as Transport
  const t = await startGateway({ network, transport, sendTimeoutMs: 300 })
  try {
    const declared = declarationChecker((await request(`${t.url}/openapi.json`)).body)
    const { authkey } = await t.register()
    await t.addDevice(authkey, 'loja')
    const failures: string[] = []
    const FAILED = { status: 502, message: 'Falha na rede de mensagens.' }
    for (const [name, failing, expected] of [
      ['throws a TypeError', () => Promise.reject(new TypeError("Cannot read properties of undefined (reading 'socket')")), FAILED],
      ['never answers', () => new Promise<never>(() => {}), { status: 504, message: 'A rede de mensagens não respondeu a tempo.' }],
      [
        'cannot reach the network',
        () => Promise.reject(new TransportError('unreachable', 'connect ECONNREFUSED')),
        { status: 503, message: 'O WhatsApp não pode ser acessado a partir deste servidor. Tente novamente mais tarde.' },
      ],
      ...(['not-found', 'not-admin', 'not-connected', 'already-connected', 'invalid'] as const).map(
        code => [`throws TransportError ${code}`, () => Promise.reject(new TransportError(code, 'status: refused')), FAILED] as const,
      ),
    ] as const) {
      fault = failing
      const answer = await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })
      if (JSON.stringify([answer.status, answer.body]) !== JSON.stringify([expected.status, expected]))
        failures.push(`${name}: answered ${answer.status} ${answer.text}`)
      failures.push(...declared('/api/developer', 'deviceStatus', answer.status, answer.body).map(failure => `${name}: ${failure}`))
    }
    assert.equal(failures, [])
    fault = undefined
    assert.is((await t.post('/api/developer', { authkey, message: 'loja', checkDispositivo: 'true' })).status, 200)
  } finally {
    await t.stop()
  }
})

test.run()
