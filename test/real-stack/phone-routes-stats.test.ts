import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { waitFor } from '../helpers/gateway.ts'
import { post } from '../helpers/http.ts'
import { SHOP, startRealStack, type RealStack } from '../helpers/real-stack.ts'

/**
 * `GET /_sim/stats` on the local WhatsApp peer counts as docs/simulator.md and the simulated network
 * do (NetworkStats): `sent` is one per message a device sent (a group message too, however many member
 * phones decrypt it), `received` one per phone message that reached at least one linked device.
 */
const stats = suite<RealStack>('the /_sim/stats counts of the local WhatsApp peer')

const ANA = '5511988880002'
const BETO = '5511977770003'
const CAIO = '5511966660004'

stats.before(async world => {
  Object.assign(world, await startRealStack())
})

stats.after(async world => {
  await world.close?.()
})

stats('a device message to a group of two phones counts one sent, as a text to one phone does', async world => {
  const { t, peer, authkey, device } = world
  peer.phone(ANA)
  peer.phone(BETO)
  const created = await t.post('/api/groups', { appkey: device.appkey, authkey, message: 'Clientes', usuarios: `${ANA}-${BETO}`, criarGrupo: 'true' })
  assert.is(created.status, 200, created.text)
  const before = await read(world)
  const toGroup = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: created.body.grupoId, message: 'Promoção' })
  assert.is(toGroup.status, 200, toGroup.text)
  for (const pn of [ANA, BETO]) await waitFor(() => peer.phone(pn).inbox.some(m => m.id === toGroup.body.id), 10_000, `${pn} to decrypt the group text`)
  assert.is((await read(world)).sent, before.sent + 1, 'one group message is one message sent')
  const toAna = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: ANA, message: 'Oi' })
  assert.is(toAna.status, 200, toAna.text)
  await waitFor(() => peer.phone(ANA).inbox.some(m => m.id === toAna.body.id), 10_000, 'Ana to decrypt the text')
  assert.is((await read(world)).sent, before.sent + 2)
  assert.equal(peer.records.problems, [])
})

stats('a phone message to a phone (or a group) with no linked device reached no device: received does not count it', async world => {
  const { peer } = world
  peer.phone(CAIO)
  const before = await read(world)
  const sent = await post(`${world.t.url}/_sim/send`, { from: ANA, to: CAIO, type: 'text', text: 'ninguém lê' })
  assert.is(sent.status, 200, sent.text)
  assert.is((await read(world)).received, before.received, 'no device got it')
  const group = await post(`${world.t.url}/_sim/groups`, { creator: ANA, subject: 'Sem aparelhos', members: [BETO, CAIO] })
  assert.is(group.status, 200, group.text)
  const toGroup = await post(`${world.t.url}/_sim/send`, { from: ANA, to: group.body.group.id, type: 'text', text: 'só telefones' })
  assert.is(toGroup.status, 200, toGroup.text)
  assert.is((await read(world)).received, before.received, 'no member has a linked device')
  const toShop = peer.phone(ANA).sendText(SHOP, 'para a loja')
  await world.hookFor(toShop.id)
  assert.is((await read(world)).received, before.received + 1)
})

stats.run()

// --- Internal helpers ---

async function read(world: RealStack): Promise<{ sent: number; received: number }> {
  return (await (await fetch(`${world.t.url}/_sim/stats`)).json()) as { sent: number; received: number }
}
