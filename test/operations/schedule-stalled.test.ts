import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { formatWallClock } from '../../src/domain/messaging/schedule-time.ts'
import { waitFor } from '../helpers/gateway.ts'
import { FRIEND, assertOk, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'

/**
 * A scheduled send that stalls on the network (504 `send-stalled` for a send made now: "the message
 * may not have been delivered", the stalled call may still complete) has an unknown outcome. Each
 * schedule is sent once (docs/scaling.md, "Guaranteed"), and the gateway never resends on its own:
 * a stalled scheduled send is not tried again; it is listed as `falhou` for the client to decide.
 */
const test = suite<{ g: SendingGateway }>('a scheduled send that stalls is never sent twice')

test.after.each(async ctx => {
  await ctx.g?.stop()
})

test('the network holds a scheduled send past sendTimeoutMs, then delivers it: it reached the phone once, and is listed falhou', async ctx => {
  const g = (ctx.g = await sendingGateway({ sendTimeoutMs: 300, scheduleRetryMs: [300, 300] }))
  const list = async () => assertOk(await g.send({ listaAgendamento: 'true', message: 'false' })).data as { situacao: string }[]
  g.network.setFault(g.deviceId, 'hang')
  const agendamento = formatWallClock(Math.ceil((Date.now() + 500) / 1000) * 1000, 'UTC')
  assertOk(await g.send({ to: FRIEND, message: 'uma vez só', agendamento }))
  await waitFor(() => g.network.faults.hanging > 0, 5000, 'the scheduled send to hang on the network')
  await waitFor(async () => (await list()).some(item => item.situacao === 'falhou'), 5000, 'the stalled send recorded')
  g.network.setFault(g.deviceId, null) // the network lets the held send through
  await waitFor(() => g.network.inbox(FRIEND).length > 0, 5000, 'the held send delivered')
  await waitFor(async () => (await list()).every(item => item.situacao !== 'pendente'), 5000, 'nothing left to send')
  assert.equal(g.network.inbox(FRIEND).length, 1, 'delivered once')
  assert.deepEqual(
    (await list()).map(item => item.situacao),
    ['falhou'],
  )
})

test.run()
