import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import Koa from 'koa'
import { simulatorRoutes } from '../adapters/transport-memory/index.ts'
import type { DeviceSummary, Gateway } from '../src/gateway.ts'
import { startGateway, type TestGateway } from './helpers/gateway.ts'
import { listen, post } from './helpers/http.ts'
import { memoryStorage } from './helpers/memory-storage.ts'
import { internalsOf } from '../src/internals.ts'

const PHONE_A = '5511911110001'
const PHONE_B = '5511922220002'

const test = suite<{ t?: TestGateway; sim?: { url: string; stop(): Promise<void> } }>(
  'gateway.findDevices: the devices of one account, for tools such as the simulator',
)
test.after.each(async ctx => {
  await ctx.sim?.stop()
  await ctx.t?.stop()
})

/** The gateway's routes and the simulator's, the simulator finding devices through gateway.findDevices. */
async function start(ctx: { t?: TestGateway; sim?: { url: string; stop(): Promise<void> } }, extra?: (ref: string) => Promise<DeviceSummary[]>) {
  const t = (ctx.t = await startGateway())
  const app = new Koa()
  const findDevices: Gateway['findDevices'] = async (authkey, ref) => {
    const found = await t.gateway.findDevices(authkey, ref)
    return found && [...found, ...((await extra?.(ref)) ?? [])]
  }
  app.use(simulatorRoutes(ctx.t.network, { findDevices }).routes())
  ctx.sim = await listen(app)
  return { t: ctx.t, sim: ctx.sim }
}

const status = async (t: TestGateway, authkey: string, ref: string) =>
  (await t.post('/api/developer', { authkey, message: ref, checkDispositivo: 'true' })).body.dispositivo

test('finds a device of the account by id, appkey or name, never another account’s device of that name or appkey', async ctx => {
  const { t } = await start(ctx)
  const a = await t.register()
  const b = await t.register()
  const deviceA = await t.addDevice(a.authkey, 'loja')
  const deviceB = await t.addDevice(b.authkey, 'loja')
  const { gateway } = t
  assert.equal(await gateway.findDevices(b.authkey, 'loja'), [{ id: deviceB.id, name: 'loja', connected: false }])
  assert.equal(await gateway.findDevices(a.authkey, 'loja'), [{ id: deviceA.id, name: 'loja', connected: false }])
  assert.equal(
    (await gateway.findDevices(a.authkey, deviceA.id))?.map(d => d.id),
    [deviceA.id],
  )
  assert.equal(await gateway.findDevices(a.authkey, deviceB.id), [], 'another account’s id finds nothing')
  assert.is(await gateway.findDevices('not-a-key', 'loja'), undefined)

  const created = await t.post('/api/developer', { authkey: a.authkey, message: 'balcao', conecteQR: 'true' })
  assert.equal(
    (await gateway.findDevices(a.authkey, created.body.appkey))?.map(d => d.name),
    ['balcao'],
    'by appkey',
  )
  assert.equal(await gateway.findDevices(b.authkey, created.body.appkey), [])
})

test('shows no phone once the phone has logged the device out, nor while it is linked anew, until the new phone links it', async ctx => {
  const { t } = await start(ctx)
  const { authkey } = await t.register()
  const device = await t.linkedDevice(authkey, 'loja', PHONE_A)
  const shown = async () => (await t.gateway.findDevices(authkey, 'loja'))?.[0]
  assert.equal(await shown(), { id: device.id, name: 'loja', phone: PHONE_A, connected: true }, 'linked: its phone')
  // The device record follows the status event before the event is emitted: once seen, findDevices reads it.
  const stored = (state: string) =>
    new Promise<void>(resolve => {
      const seen = ({ deviceId, status }: { deviceId: string; status: { state: string } }) => {
        if (deviceId !== device.id || status.state !== state) return
        t.gateway.events.off('device-status', seen)
        resolve()
      }
      t.gateway.events.on('device-status', seen)
    })
  const loggedOut = stored('logged-out')
  await t.network.unlink(device.id)
  await loggedOut
  assert.equal(await shown(), { id: device.id, name: 'loja', connected: false }, 'logged out: no phone is linked')
  const linking = stored('linking')
  assert.is((await t.post('/api/v2/qrcode', { authkey, setAppkey: 'loja' })).status, 200)
  await linking
  assert.equal(await shown(), { id: device.id, name: 'loja', connected: false }, 'linking anew: still none')
  const open = stored('open')
  await t.network.scan({ deviceId: device.id }, PHONE_B)
  await open
  assert.equal(await shown(), { id: device.id, name: 'loja', phone: PHONE_B, connected: true }, 'the new phone')
})

test('POST /_sim/scan by name links the device of the authkey’s account, even when another account was first with that name', async ctx => {
  const { t, sim } = await start(ctx)
  const a = await t.register()
  const b = await t.register()
  await t.addDevice(a.authkey, 'loja')
  await t.addDevice(b.authkey, 'loja')
  assert.is((await post(`${sim.url}/_sim/scan`, { authkey: b.authkey, appkey: 'loja', phone: PHONE_B })).status, 200)
  await t.network.settled()
  assert.is((await status(t, b.authkey, 'loja')).telefone, PHONE_B)
  assert.is((await status(t, a.authkey, 'loja')).conectado, false, 'the other account’s device is untouched')

  assert.is((await post(`${sim.url}/_sim/scan`, { authkey: a.authkey, appkey: 'loja', phone: PHONE_A })).status, 200)
  await t.network.settled()
  assert.is((await status(t, a.authkey, 'loja')).telefone, PHONE_A)
  assert.is((await post(`${sim.url}/_sim/unlink`, { authkey: a.authkey, appkey: 'loja' })).status, 200)
  await t.network.settled()
  assert.is((await status(t, a.authkey, 'loja')).estado, 'logged-out')
  assert.is((await status(t, b.authkey, 'loja')).conectado, true, 'unlink too stays in the account')
})

test('POST /_sim/scan answers 409 when the ref is one device’s id and another’s name, 401 for an unknown authkey, 404 for no device', async ctx => {
  // The API refuses a name equal to another device's id (test/http/device-names.test.ts): a device stored under such a name before plays here its part (found by name).
  let first: any, second: any
  const { t, sim } = await start(ctx, async ref => (ref === first?.body.id ? [{ id: second.body.id, name: ref, connected: false }] : []))
  const { authkey } = await t.register()
  first = await t.post('/api/developer', { authkey, message: 'primeiro', conecteQR: 'true' })
  second = await t.post('/api/developer', { authkey, message: 'segundo', conecteQR: 'true' })
  const ambiguous = await post(`${sim.url}/_sim/scan`, { authkey, appkey: first.body.id, phone: PHONE_A })
  assert.equal(ambiguous.body, {
    status: 409,
    message: `${JSON.stringify(first.body.id)} names 2 devices of the account (by id, appkey or name): use the device id`,
  })
  assert.is((await status(t, authkey, second.body.id)).conectado, false, 'the refused scan linked nothing')
  assert.is((await post(`${sim.url}/_sim/scan`, { authkey, appkey: second.body.id, phone: PHONE_A })).status, 200, 'the other id settles it')
  assert.equal((await post(`${sim.url}/_sim/scan`, { authkey: 'x'.repeat(32), appkey: 'primeiro', phone: PHONE_A })).body, {
    status: 401,
    message: 'unknown or expired authkey',
  })
  assert.equal((await post(`${sim.url}/_sim/scan`, { authkey, appkey: 'nenhum', phone: PHONE_A })).body, { status: 404, message: 'device not found' })
})

test('a device whose deletion was cut short (marked removing) is not found, as everywhere but operation 6: /_sim/scan answers 404', async ctx => {
  const store = memoryStorage()
  let failing = false
  const storage = {
    ...store,
    delete: async (key: string) => {
      if (failing && key.includes('share-link:')) throw new Error('store connection lost')
      return store.delete(key)
    },
  }
  const t = (ctx.t = await startGateway({ storage }))
  const app = new Koa()
  app.use(simulatorRoutes(t.network, { findDevices: t.gateway.findDevices }).routes())
  const sim = (ctx.sim = await listen(app))
  const { authkey } = await t.register()
  const device = await t.addDevice(authkey, 'loja') // with a share link, whose deletion fails below
  failing = true
  assert.is((await t.post('/api/developer', { authkey, message: 'loja', apagarDispositivo: 'true' })).status, 500)
  failing = false
  assert.is((await internalsOf(t.gateway).devices.get(device.id))?.removing, true, 'the deletion was cut short')
  for (const ref of ['loja', device.id]) assert.equal(await t.gateway.findDevices(authkey, ref), [], `by ${ref}`)
  assert.equal((await post(`${sim.url}/_sim/scan`, { authkey, appkey: 'loja', phone: PHONE_A })).body, { status: 404, message: 'device not found' })
})

test.run()
