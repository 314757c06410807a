import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'
import type { Answer } from '../helpers/http.ts'

/** Assert the body status, the HTTP code and the exact message. */
function answers(answer: Answer, status: number, message: string) {
  assert.is(answer.body?.status, status, `body status of ${answer.text}`)
  assert.is(answer.status, status, `HTTP code of ${answer.text}`)
  assert.is(answer.body?.message, message)
}

type Ctx = { t: TestGateway; authkey: string }
const test = suite<Ctx>('device names: trimmed like other names, and never one another device of the account answers to by id')
test.before(async ctx => {
  ctx.t = await startGateway()
  ctx.authkey = (await ctx.t.register()).authkey
})
test.after(ctx => ctx.t.stop())

const status = (t: TestGateway, authkey: string, message: string) => t.post('/api/developer', { authkey, message, checkDispositivo: 'true' })

test('operation 4 trims the device name: it is found by the name without the spaces, and reused by it', async ({ t, authkey }) => {
  const added = await t.post('/api/developer', { authkey, message: '  recepcao  ', conecteQR: 'true' })
  assert.is(added.status, 200)
  const found = await status(t, authkey, 'recepcao')
  assert.is(found.status, 200, found.text)
  assert.is(found.body.dispositivo.nome, 'recepcao')
  assert.is(found.body.dispositivo.id, added.body.id)
  const again = await t.post('/api/developer', { authkey, message: 'recepcao', conecteQR: 'true' })
  assert.is(again.body.id, added.body.id, 'the same device, not a second one')
  assert.is((await status(t, authkey, ' recepcao ')).body.dispositivo?.id, added.body.id, 'a reference with spaces finds it too')
})

test('operation 3 trims setAppkey, which is the name and the appkey', async ({ t, authkey }) => {
  const made = await t.post('/api/v2/qrcode', { authkey, setAppkey: ' loja ' })
  assert.is(made.status, 200)
  assert.is(made.body.appkey, 'loja')
  assert.is((await status(t, authkey, 'loja')).body.dispositivo?.nome, 'loja')
  assert.is((await t.post('/api/v2/qrcode', { authkey, setAppkey: 'loja' })).body.id, made.body.id)
})

test('a name equal to the id of another device of the account is refused (3: 400, 4: 401): the id would shadow it', async ({ t, authkey }) => {
  const first = await t.post('/api/developer', { authkey, message: 'primeiro', conecteQR: 'true' })
  const id = first.body.id as string
  answers(await t.post('/api/developer', { authkey, message: id, conecteQR: 'true' }), 401, 'validation.required')
  answers(await t.post('/api/developer', { authkey, message: ` ${id} `, conecteQR: 'true' }), 401, 'validation.required')
  answers(await t.post('/api/v2/qrcode', { authkey, setAppkey: id }), 400, 'Parâmetros inválidos.')
  const byId = await status(t, authkey, id)
  assert.is(byId.body.dispositivo.nome, 'primeiro', 'the id still names the first device, and no device of that name was made')
})

test('the id of a device of another account is a name like any other', async ({ t, authkey }) => {
  const other = (await t.register()).authkey
  const theirs = await t.post('/api/developer', { authkey: other, message: 'deles', conecteQR: 'true' })
  const mine = await t.post('/api/developer', { authkey, message: theirs.body.id, conecteQR: 'true' })
  assert.is(mine.status, 200, mine.text)
  assert.is((await status(t, authkey, theirs.body.id)).body.dispositivo.id, mine.body.id)
  assert.is((await status(t, other, theirs.body.id)).body.dispositivo.nome, 'deles')
})

test.run()
