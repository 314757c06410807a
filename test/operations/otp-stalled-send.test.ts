import { suite } from 'uvu'
import { waitFor } from '../helpers/gateway.ts'
import { FRIEND, assertError, assertOk, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'

/**
 * An OTP send that stalls on the network: 504 `send-stalled`, "the message may not have been
 * delivered" (docs/decisions.md), and the stalled call may still complete. When it does, the
 * recipient holds the new code: it must verify. Before, the handler withdrew the new code on any
 * error (putting back the one it replaced), so the code the phone received was answered 401.
 */
const test = suite<{ g: SendingGateway }>('OTP: a code whose send stalled, then reached the phone')

test.after.each(async ctx => {
  ctx.g?.network.setFault(ctx.g.deviceId, null)
  await ctx.g?.stop()
})

const codes = (g: SendingGateway) => (g.network.inbox(FRIEND).filter(e => e.type === 'text') as { text: string }[]).map(e => /\b(\d{6})\b/.exec(e.text)![1]!)

test('the network holds the OTP send past sendTimeoutMs (504), then delivers it: the delivered code verifies', async ctx => {
  const g = (ctx.g = await sendingGateway({ sendTimeoutMs: 300 }))
  g.network.setFault(g.deviceId, 'hang')
  assertError(await g.send({ to: FRIEND, enviarOTP: 'true' }), 504, 'O envio não foi concluído a tempo; a mensagem pode não ter sido entregue.')
  g.network.setFault(g.deviceId, null) // the network lets the held send through
  await waitFor(() => codes(g).length > 0, 5000, 'the held code delivered')
  const [code] = codes(g)
  assertOk(await g.send({ to: FRIEND, message: 'false', verificarOTP: code! }))
})

test.run()
