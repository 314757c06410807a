import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'

type Ctx = { t: TestGateway; a: string; b: string; device: { id: string; appkey: string }; randomKeyed: { id: string; appkey: string } }
const tenancy = suite<Ctx>('tenant isolation of devices (operations 2-7)')

tenancy.before(async ctx => {
  ctx.t = await startGateway()
  ctx.a = (await ctx.t.register()).authkey
  ctx.b = (await ctx.t.register()).authkey
  ctx.device = await ctx.t.linkedDevice(ctx.a, 'loja-a', '5511911112222')
  const random = await ctx.t.post('/api/developer', { authkey: ctx.a, message: 'aleatorio-a', conecteQR: 'true' })
  ctx.randomKeyed = { id: random.body.id, appkey: random.body.appkey }
})
tenancy.after(ctx => ctx.t.stop())

/** A's view of its devices, to compare before and after B's attempts. */
async function snapshot(t: TestGateway, authkey: string) {
  const one = async (ref: string) => (await t.post('/api/developer', { authkey, message: ref, checkDispositivo: 'true' })).body.dispositivo
  return { linked: await one('loja-a'), random: await one('aleatorio-a') }
}

tenancy("account B cannot see A's device by name, id or appkey", async ({ t, b, device, randomKeyed }) => {
  for (const ref of ['loja-a', device.id, device.appkey, 'aleatorio-a', randomKeyed.id, randomKeyed.appkey]) {
    const answer = await t.post('/api/developer', { authkey: b, message: ref, checkDispositivo: 'true' })
    assert.is(answer.status, 404, ref)
    assert.is(answer.body.message, 'Nenhum dispositivo encontrado.')
  }
})

tenancy("account B cannot delete, unlink or revoke links of A's device by name, id or appkey", async ({ t, a, b, device, randomKeyed }) => {
  const before = await snapshot(t, a)
  for (const ref of ['loja-a', device.id, device.appkey, randomKeyed.id, randomKeyed.appkey]) {
    assert.is((await t.post('/api/developer', { authkey: b, message: ref, apagarDispositivo: 'true', apagarAppkey: 'true' })).status, 404)
    assert.is((await t.post('/api/developer', { authkey: b, appkey: ref, message: 'false', to: ref, GerenciarLinks: 'excluir' })).status, 404)
    assert.is((await t.post('/api/v2/ia', { authkey: b, device: ref, agent_name: 'intruso' })).status, 404)
  }
  assert.equal(await snapshot(t, a), before)
  assert.is(t.network.linkedPhone(device.id), '5511911112222')
})

tenancy("account B linking a device with A's name or appkey gets a device of its own", async ({ t, a, b, device, randomKeyed }) => {
  const before = await snapshot(t, a)
  for (const setAppkey of ['loja-a', device.appkey, randomKeyed.appkey]) {
    const answer = await t.post('/api/v2/qrcode', { authkey: b, setAppkey })
    assert.is(answer.status, 200)
    assert.ok(![device.id, randomKeyed.id].includes(answer.body.id))
  }
  const mine = await t.post('/api/developer', { authkey: b, message: 'loja-a', conecteQR: 'true' })
  assert.ok(![device.id, randomKeyed.id].includes(mine.body.id))
  assert.equal(await snapshot(t, a), before)
})

tenancy("A's own operations are unaffected by B's devices of the same name", async ({ t, a, device }) => {
  const answer = await t.post('/api/developer', { authkey: a, message: 'loja-a', checkDispositivo: 'true' })
  assert.is(answer.body.dispositivo.id, device.id)
  assert.is(answer.body.dispositivo.conectado, true)
})

tenancy.run()
