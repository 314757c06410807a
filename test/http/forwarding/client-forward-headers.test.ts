import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import { ForwardHeaders } from '../../../src/http/forwarding/signature.ts'
import { operationTable } from '../../../src/operations/table.ts'
import { inProcessCluster } from '../../helpers/cluster-in-process.ts'
import { startGateway } from '../../helpers/gateway.ts'
import { request } from '../../helpers/http.ts'
import { answerChecker } from '../../helpers/openapi.ts'

/**
 * A client (or a proxy in front of the gateway) whose request carries the headers instances forward
 * with, unsigned: docs/api.md, "Forwarding headers". In cluster mode it is refused 403
 * `forward-refused` on every operation path, an answer the OpenAPI document lists there; outside
 * cluster mode the headers mean nothing and the request is answered as without them.
 */

const REFUSED = { status: 403, message: 'Requisição encaminhada recusada: assinatura inválida ou expirada.' }
const REGISTER = { auth: 'registrar', nome: 'Cliente', email: 'headers@example.com', senha: 'senha-secreta', telefone: '+55 11 99999-0000', plano: '1' }

/** POST `body` as JSON to `url` with an unsigned `x-zapgate-forwarded-by`. */
function postClaimingForward(url: string, body: Record<string, unknown>) {
  return request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [ForwardHeaders.forwardedBy]: 'my-proxy' },
    body: JSON.stringify(body),
  })
}

test('in cluster mode an unsigned forwarding header is refused 403 forward-refused on every operation path, as the OpenAPI document declares', async () => {
  const network = new MemoryNetwork()
  const [member] = await inProcessCluster(1, () => ({ transport: memoryTransport({ network }) }))
  try {
    const fits = await answerChecker((await request(`${member!.url}/openapi.json`)).body)
    const failures: string[] = []
    for (const { path } of operationTable) {
      const answer = await postClaimingForward(`${member!.url}${path}`, { ...REGISTER, authkey: 'k', appkey: 'loja', message: 'oi', to: '5511988880002' })
      assert.equal(answer.body, REFUSED, path)
      assert.is(answer.status, 403, path)
      failures.push(...fits(path, answer.status, answer.body))
    }
    assert.equal(failures, [])
  } finally {
    await member!.stop()
  }
})

test('outside cluster mode the forwarding headers are ignored: the request is answered as without them (never a 403 or a 500)', async () => {
  const t = await startGateway()
  try {
    const registered = await postClaimingForward(`${t.url}/api/auth`, REGISTER)
    assert.is(registered.status, 200, registered.text)
    assert.is(registered.body.data.email, REGISTER.email)
    const { authkey } = registered.body.data
    const status = await postClaimingForward(`${t.url}/api/developer`, { authkey, message: 'nenhum', checkDispositivo: 'true' })
    assert.equal(status.body, { status: 404, message: 'Nenhum dispositivo encontrado.' })
  } finally {
    await t.stop()
  }
})

test.run()
