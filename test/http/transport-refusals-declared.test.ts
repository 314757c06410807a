import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { memoryTransport, MemoryNetwork } from '../../adapters/transport-memory/index.ts'
import { TransportError, type Transport } from '../../src/ports/transport.ts'
import { startGateway } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'
import { declarationChecker, networkCallRequests } from '../helpers/openapi.ts'

/**
 * A host's transport that throws `already-connected` (the port's answer to a link of a linked device)
 * from a call that is no link: the sends, a read receipt, the OTP send and the group operations answer
 * the network's failure (502), which each declares, not a 409 `Dispositivo já conectado.` that none of
 * them declares (SECURITY.md, `guardTransport`).
 */
test('already-connected thrown by a send, a read receipt or a group call is the network failure (502) each declares', async () => {
  const network = new MemoryNetwork()
  const inner = memoryTransport({ network })
  const refused = new Set(['send', 'markRead', 'groupInfo', 'groupCreate', 'groupJoin'])
  let refusing = false
  // The host's transport, as the gateway gets it (wrapped by guardTransport): its calls refused once the device is linked.
  const transport = new Proxy(inner, {
    get: (target, name, receiver) => {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function') return value
      if (refusing && typeof name === 'string' && refused.has(name))
        return async (): Promise<never> => {
          throw new TransportError('already-connected', 'the session is connected already')
        }
      return value.bind(target)
    },
  }) as Transport
  const t = await startGateway({ network, transport })
  try {
    const declared = declarationChecker((await request(`${t.url}/openapi.json`)).body)
    const { authkey } = await t.register()
    await t.linkedDevice(authkey, 'loja', '5511999990001')
    refusing = true
    const keys = { authkey, appkey: 'loja' }
    const failures: string[] = []
    for (const [path, body, operation] of networkCallRequests(keys)) {
      const answer = await t.post(path, body)
      if (answer.status !== 502 || (answer.body as { message?: string }).message !== 'Falha na rede de mensagens.')
        failures.push(`${operation}: answered ${answer.status} ${answer.text}`)
      failures.push(...declared(path, operation, answer.status, answer.body).map(failure => `${operation}: ${failure}`))
    }
    assert.equal(failures, [])
  } finally {
    await t.stop()
  }
})

test.run()
