import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { suite } from 'uvu'
import { request } from '../../helpers/http.ts'
import { FRIEND, inbox } from '../../helpers/messaging.ts'
import { PNG } from '../../helpers/samples.ts'
import { withHolderAndForwarder, type ForwardingPair } from '../../helpers/forwarding.ts'

const test = suite<ForwardingPair>('forwarding an upload to the instance holding its device: what a direct upload makes')

withHolderAndForwarder(test)

test('a multipart upload forwarded reaches the network as the same bytes, with its file name and type', async ctx => {
  const { g, transport } = ctx.holder
  const bytes = randomBytes(100 * 1024)
  const form = new FormData()
  for (const [key, value] of Object.entries({ appkey: g.appkey, authkey: g.authkey, to: FRIEND, descricao: 'o contrato' })) form.append(key, value)
  form.append('file', new File([bytes], 'contrato final.pdf', { type: 'application/pdf' }))
  const answer = await request(`${ctx.entry.url}/api/create-message`, { method: 'POST', body: form })
  assert.equal(answer.status, 200, answer.text)
  assert.equal(answer.body.message, 'Arquivo enviado.')
  const message = transport.sent.at(-1)!
  assert.ok(message.kind === 'media')
  assert.ok(message.file.data.equals(bytes), 'the same bytes')
  assert.equal(message.file.fileName, 'contrato final.pdf')
  assert.equal(message.file.mimetype, 'application/pdf')
  assert.equal(message.caption, 'o contrato')
  // The same upload straight to the holder makes the same message.
  const image = () => {
    const f = new FormData()
    for (const [key, value] of Object.entries({ appkey: g.appkey, authkey: g.authkey, to: FRIEND })) f.append(key, value)
    f.append('file', new File([PNG], 'logo.png'))
    return f
  }
  const forwarded = await request(`${ctx.entry.url}/api/create-message`, { method: 'POST', body: image() })
  const direct = await request(`${ctx.holder.url}/api/create-message`, { method: 'POST', body: image() })
  assert.equal(forwarded.status, 200, forwarded.text)
  assert.equal(direct.status, 200, direct.text)
  const [viaForward, viaHolder] = inbox(g.network, FRIEND)
    .slice(-2)
    .map(({ id, ...entry }) => entry)
  assert.deepEqual(viaForward, viaHolder)
  assert.deepEqual(viaForward, { from: viaForward!.from, type: 'image', fileName: 'logo.png', mimetype: 'image/png', bytes: PNG.length })
})

test('a forwarded upload with a blank message keeps the file name a direct one keeps', async ctx => {
  const { g, transport } = ctx.holder
  const upload = (message: string) => {
    const f = new FormData()
    for (const [key, value] of Object.entries({ appkey: g.appkey, authkey: g.authkey, to: FRIEND, message })) f.append(key, value)
    f.append('file', new File([randomBytes(1024)], 'relatorio.pdf', { type: 'application/pdf' }))
    return f
  }
  for (const message of ['  ', '/']) {
    const names = []
    for (const url of [ctx.holder.url, ctx.entry.url]) {
      const answer = await request(`${url}/api/create-message`, { method: 'POST', body: upload(message) })
      assert.equal(answer.status, 200, answer.text)
      const sent = transport.sent.at(-1)!
      names.push(sent.kind === 'media' ? sent.file.fileName : sent.kind)
    }
    assert.deepEqual(names, ['relatorio.pdf', 'relatorio.pdf'], `message ${JSON.stringify(message)}`)
  }
})

test.run()
