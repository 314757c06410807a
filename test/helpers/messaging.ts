import assert from 'node:assert/strict'
import { suite, type Test } from 'uvu'
import type { GatewayOptions } from '../../src/index.ts'
import type { MemoryNetwork } from '../../adapters/transport-memory/index.ts'
import { startGateway, type TestGateway } from './gateway.ts'
import type { Answer, Encoding } from './http.ts'
import { eventId, outboxKey } from '../../src/domain/webhooks/outbox-store.ts'
import { webhookPayload } from '../../src/domain/webhooks/payload.ts'
import type { IncomingMessage } from '../../src/ports/transport.ts'

/** The phone the test device is linked to, and two other phones. */
export const DEVICE_PHONE = '5511999990001'
export const FRIEND = '5511988880002'
export const OTHER = '5511977770003'

/** A gateway with one account and one linked device (appkey `loja`), ready to send. */
export interface SendingGateway {
  t: TestGateway
  network: MemoryNetwork
  authkey: string
  appkey: string
  deviceId: string
  /** POST /api/create-message with the device's keys (overridable) and `body`. */
  send(body: Record<string, unknown>, encoding?: Encoding): Promise<Answer>
  /** POST /api/groups with the device's keys and `body`. */
  groups(body: Record<string, unknown>, encoding?: Encoding): Promise<Answer>
  stop(): Promise<void>
}

/** A suite whose every test gets a fresh sendingGateway(`options`) as `g`, stopped after the test. */
export function sendingSuite(name: string, options: GatewayOptions = {}): Test<{ g: SendingGateway }> {
  const test = suite<{ g: SendingGateway }>(name)
  test.before.each(async ctx => {
    ctx.g = await sendingGateway(options)
  })
  test.after.each(async ctx => {
    await ctx.g.stop()
  })
  return test
}

/** Start a gateway on a fresh simulated network with a linked device `loja` on DEVICE_PHONE. */
export async function sendingGateway(options: GatewayOptions & { network?: MemoryNetwork } = {}): Promise<SendingGateway> {
  const t = await startGateway(options)
  const { authkey } = await t.register()
  const device = await t.linkedDevice(authkey, 'loja', DEVICE_PHONE)
  const keys = { appkey: device.appkey, authkey }
  return {
    t,
    network: t.network,
    authkey,
    appkey: device.appkey,
    deviceId: device.id,
    send: (body, encoding) => t.post('/api/create-message', { ...keys, ...body }, encoding),
    groups: (body, encoding) => t.post('/api/groups', { ...keys, ...body }, encoding),
    stop: () => t.stop(),
  }
}

/** Assert an error answer: HTTP code and body status both `status`, exact message (and extra fields). */
export function assertError(answer: Answer, status: number, message: string, extra: Record<string, unknown> = {}): void {
  assert.equal(answer.status, status, `HTTP ${answer.status}: ${answer.text}`)
  assert.deepEqual(answer.body, { status, message, ...extra })
}

/** Assert a 200 answer and return its body. */
export function assertOk(answer: Answer): any {
  assert.equal(answer.status, 200, answer.text)
  assert.equal(answer.body.status, 200)
  return answer.body
}

/** The inbox of `phone` without the volatile fields (`timestamp`). */
export function inbox(network: MemoryNetwork, phone: string): Record<string, unknown>[] {
  return network.inbox(phone).map(({ timestamp: _t, ...entry }) => entry)
}

/** `body` without `field`. */
export function without(body: Record<string, unknown>, field: string): Record<string, unknown> {
  const { [field]: _dropped, ...rest } = body
  return rest
}

/** The store key of the webhook event a text from `from` with network id `id` gives `device` (its outbox record, while pending). */
export function outboxKeyOfText(device: Parameters<typeof webhookPayload>[0], id: string, from: string, to = DEVICE_PHONE): string {
  const message: IncomingMessage = { id, chat: from, from, to, fromMe: false, isGroup: false, timestamp: 0, content: { kind: 'text', text: '' } }
  return `webhook-outbox:${outboxKey(device.id, eventId(device.id, webhookPayload(device, message)!))}`
}
