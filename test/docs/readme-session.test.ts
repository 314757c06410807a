import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import Koa, { type Middleware } from 'koa'
import type Router from '@koa/router'
import { createGateway, type Gateway, type Transport } from '../../src/index.ts'
import { silentLogger } from '../../src/logger.ts'
import { MemoryNetwork, memoryTransport, simulatorRoutes } from '../../adapters/transport-memory/index.ts'
import { waPeerMode } from '../../examples/wa-peer-mode.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'
import { waitFor } from '../helpers/gateway.ts'
import { listen, post } from '../helpers/http.ts'
import { readme } from '../helpers/readme.ts'

/**
 * The README's simulator session ("The simulator": a session from scratch) runs as written, one step right
 * after the other as a script would send them, on the simulated network (`GATEWAY_TRANSPORT=memory npm start`)
 * and on the local WhatsApp peer as `GATEWAY_WA_PEER=local npm start` sets it up (examples/wa-peer-mode.ts;
 * the README says the session "works as written" there): each step answers 200, the device is open as the scan
 * answers (docs/simulator.md: "it connects as that number"), and the `→` of a step holds (a Texto webhook; the
 * inbox entry's fields). The `…` of a request are the authkey of the registration's
 * answer; the webhook URL is a receiver of the test's.
 */

interface Step {
  method: string
  path: string
  body?: Record<string, unknown>
  expects?: string
}

const steps = sessionSteps(readme())
const test = suite('README: the simulator session runs as written')

test('the README shows the session: register, QR, scan, a phone sends, the gateway sends, the inbox', () => {
  assert.equal(
    steps.map(step => `${step.method} ${step.path.replace(/\/\d+$/, '/:phone')}`),
    ['POST /api/auth', 'POST /api/v2/qrcode', 'POST /_sim/scan', 'POST /_sim/send', 'POST /api/create-message', 'GET /_sim/inbox/:phone'],
  )
})

test('on the simulated network', async () => {
  const network = new MemoryNetwork()
  await runSession(memoryTransport({ network }), gateway => simulatorRoutes(network, { findDevices: gateway.findDevices }))
})

test('on the real Baileys stack against the local WhatsApp peer (GATEWAY_WA_PEER=local)', async () => {
  const mode = await waPeerMode('local', silentLogger)
  try {
    await runSession(mode.transport, mode.phoneRouter!)
  } finally {
    await mode.close()
  }
})

test.run()

// --- Internal helpers ---

/** Run the steps against a gateway on `transport` served beside `phones`' routes, as the standalone server mounts them; then stop it. */
async function runSession(transport: Transport, phones: (gateway: Gateway) => Router): Promise<void> {
  const gateway = await createGateway({ transport, allowPrivateUrls: true })
  const server = await listen(new Koa().use(phones(gateway).routes() as unknown as Middleware).use(gateway.routes()))
  let receiver: Receiver | undefined
  try {
    receiver = await startReceiver()
    let authkey = ''
    for (const step of steps) {
      const body =
        step.body && JSON.parse(JSON.stringify(step.body).replaceAll('"…"', JSON.stringify(authkey)).replace('http://127.0.0.1:9000/hook', receiver.url))
      const answer =
        step.method === 'GET'
          ? await fetch(server.url + step.path).then(async res => ({ status: res.status, body: await res.json(), text: '' }))
          : await post(server.url + step.path, body)
      assert.is(answer.status, 200, `${step.method} ${step.path}: ${answer.text || JSON.stringify(answer.body)}`)
      if (step.path === '/api/auth') authkey = answer.body.data.authkey
      if (step.path === '/_sim/scan') {
        // docs/simulator.md: the phone scans the QR, "it connects as that number": the scan answers once the device is open.
        const status = await post(server.url + '/api/developer', { authkey, message: body!.appkey, checkDispositivo: 'true' })
        assert.equal([status.body.dispositivo?.conectado, status.body.dispositivo?.estado], [true, 'open'], `the device as the scan answers: ${status.text}`)
      }
      if (step.expects?.includes('Texto webhook')) {
        const id = answer.body.id
        await waitFor(
          () => receiver!.hooks.some(hook => hook.payload?.idMessagem === id && hook.payload?.event === 'Texto'),
          10_000,
          `the Texto webhook of ${id}`,
        )
      }
      if (step.expects?.startsWith('[')) {
        const expected = JSON.parse(step.expects.replaceAll(',…', '')) as Record<string, unknown>[]
        assert.equal(
          (answer.body as Record<string, unknown>[]).map((entry, i) => Object.fromEntries(Object.keys(expected[i] ?? {}).map(key => [key, entry[key]]))),
          expected,
          `${step.path}: ${JSON.stringify(answer.body)}`,
        )
      }
    }
  } finally {
    await receiver?.stop()
    await server.stop()
    await gateway.close()
  }
}

/** The steps of the README's session: the lines `POST /path {json}  → what it gives` and `GET /path → ...` of its block. */
function sessionSteps(markdown: string): Step[] {
  const start = markdown.indexOf('A\nsession from scratch')
  assert.ok(start >= 0, "README's simulator section introduces a session from scratch")
  const block = markdown.slice(markdown.indexOf('```\n', start) + 4, markdown.indexOf('\n```', markdown.indexOf('```\n', start) + 4))
  return block.split('\n').map(line => {
    const match = /^(POST|GET)\s+(\S+)\s*(\{.*?\})?\s*(?:→\s*(.*))?$/.exec(line.trim())
    assert.ok(match, `a step: ${line}`)
    const [, method, path, body, expects] = match
    return { method: method!, path: path!, ...(body ? { body: JSON.parse(body) } : {}), ...(expects ? { expects: expects.trim() } : {}) }
  })
}
