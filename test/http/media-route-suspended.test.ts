import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { MediaLinks } from '../../src/domain/media-links.ts'
import type { MediaPayload } from '../../src/ports/transport.ts'
import { internalsOf } from '../../src/internals.ts'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'

/**
 * A suspended or expired account gets nothing in its name (docs/api.md: its key is refused, so are
 * its QR links, its scheduled items fail): its media links, made before, do not have its device's
 * session fetch media either. They answer as an unknown link, and serve again once it is resumed.
 */
type Ctx = { t: TestGateway; downloads: number }
const test = suite<Ctx>('media links of a suspended or expired account')
test.before(async ctx => {
  ctx.t = await startGateway()
  ctx.downloads = 0
  const { transport } = internalsOf(ctx.t.gateway) as { transport: { downloadMedia?: unknown } }
  transport.downloadMedia = async (): Promise<MediaPayload> => (ctx.downloads++, { data: Buffer.from('%PDF-1.7 doc'), mimetype: 'application/pdf' })
})
test.after(ctx => ctx.t.stop())

const GONE = { status: 404, message: 'Mídia não encontrada ou link expirado.' }

async function mediaLink(t: TestGateway, name: string, phone: string): Promise<{ url: string; email: string }> {
  const { authkey, email } = await t.register()
  const device = await t.linkedDevice(authkey, name, phone)
  const { mediaLinks } = internalsOf(t.gateway) as unknown as { mediaLinks: MediaLinks }
  const token = await mediaLinks.sign({ deviceId: device.id, message: { chat: '5511900001111', id: '3EB0AAAA', fromMe: false } })
  return { url: `${t.url}/media/${token}`, email }
}

test('404 while the account is suspended (nothing downloaded), the bytes again once resumed', async ctx => {
  const { t } = ctx
  const { url, email } = await mediaLink(t, 'arquivo', '5511944445555')
  assert.is((await request(url)).status, 200)
  await t.gateway.accounts.suspend(email)
  const before = ctx.downloads
  const refused = await request(url)
  assert.equal([refused.status, refused.body], [404, GONE])
  assert.is(ctx.downloads, before, 'no download in the name of a suspended account')
  await t.gateway.accounts.resume(email)
  const back = await request(url)
  assert.is(back.status, 200)
  assert.is(back.text, '%PDF-1.7 doc')
})

test('404 for an account whose plan has expired', async ({ t }) => {
  const { url, email } = await mediaLink(t, 'vencido', '5511944445556')
  assert.is((await request(url)).status, 200)
  // Its last day in the past, as time would make it, by hand in the store (and every cached copy dropped).
  const { storage, epoch } = internalsOf(t.gateway)
  for await (const [key, value] of storage.list<{ email: string }>('account:'))
    if (value.email === email) await storage.set(key, { ...value, expiresOn: '2020-01-01' })
  await epoch.bump()
  assert.equal((await request(url)).body, GONE)
})

test.run()
