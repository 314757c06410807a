import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { MemoryNetwork, memoryTransport } from '../../adapters/transport-memory/index.ts'
import { TransportError, type OutgoingMessage, type SentMessage } from '../../src/ports/transport.ts'
import { waitFor } from '../helpers/gateway.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { FRIEND, assertError, assertOk, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'

/**
 * Two OTP sends to one recipient whose sends both fail (docs/decisions.md: a refused send changes
 * nothing): the code the recipient holds from before stays the valid one, whichever order the
 * failures come in. Before, the second send's failure put back the code of the first, never delivered.
 */
const test = suite<{ g: SendingGateway }>('OTP: two sends that fail, after a code was delivered')

test.after.each(async ctx => {
  await ctx.g?.stop()
})

const INVALID = 'OTP inválido ou expirado.'
const codeOf = (text: string) => /\b(\d{6})\b/.exec(text)![1]!

/** A gateway whose texts, once `hold()` is called, wait in `held` for the test to refuse them (never sent); `remembered()` counts the OTP texts recorded (each after its code was issued). */
async function holdingGateway() {
  const network = new MemoryNetwork()
  const transport = memoryTransport({ network })
  const send = transport.send.bind(transport)
  const held: { text: string; refuse(): void }[] = []
  let holding = false
  transport.send = (deviceId: string, to: string, message: OutgoingMessage): Promise<SentMessage> => {
    if (!holding || message.kind !== 'text') return send(deviceId, to, message)
    return new Promise<SentMessage>((resolve, reject) =>
      held.push({ text: message.text, refuse: () => reject(new TransportError('failed', 'refused by the network')) }),
    )
  }
  const storage = memoryStorage()
  let remembered = 0
  const set = storage.set.bind(storage)
  storage.set = (key, value, ttlMs) => set(key, value, ttlMs).then(() => void (key.includes('otp-text:') && remembered++))
  const g = await sendingGateway({ network, transport, storage })
  return { g, held, hold: () => (holding = true), remembered: () => remembered }
}

test('code c0 delivered; sends A (c1) and B (c2) issued, A fails, then B fails: c0 verifies, c1 and c2 do not', async ctx => {
  const { g, held, hold, remembered } = await holdingGateway()
  ctx.g = g
  assertOk(await g.send({ to: FRIEND, enviarOTP: 'true' }))
  const texts = g.network.inbox(FRIEND).filter(e => e.type === 'text') as { text: string }[]
  const c0 = codeOf(texts.at(-1)!.text)
  hold()
  const a = g.send({ to: FRIEND, enviarOTP: 'true' })
  await waitFor(() => held.length === 1, 5000, "A's send at the network")
  const b = g.send({ to: FRIEND, enviarOTP: 'true' })
  await waitFor(() => remembered() === 3, 5000, 'B issued its code (c2 stored)')
  held[0]!.refuse()
  assert.notEqual((await a).status, 200, 'A failed')
  await waitFor(() => held.length === 2, 5000, "B's send at the network")
  held[1]!.refuse()
  assert.notEqual((await b).status, 200, 'B failed')
  const [c1, c2] = held.map(h => codeOf(h.text))
  const verify = (code: string) => g.send({ to: FRIEND, message: 'false', verificarOTP: code })
  if (c1 !== c0) assert.equal((await verify(c1!)).status, 401, 'c1, never delivered, is not valid')
  if (c2 !== c0) assertError(await verify(c2!), 401, INVALID, { valid: false })
  assertOk(await g.send({ to: FRIEND, message: 'false', verificarOTP: c0 }))
})

test.run()
