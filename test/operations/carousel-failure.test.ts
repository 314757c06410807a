import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { fileServer, type FileServer } from '../helpers/file-server.ts'
import { waitFor } from '../helpers/gateway.ts'
import { FRIEND, assertError, assertOk, sendingGateway, type SendingGateway } from '../helpers/messaging.ts'
import { PNG } from '../helpers/samples.ts'

/**
 * A carousel whose one card image fails is answered with that failure and gives its media budget
 * back: the other card downloads must not run on uncounted after that. The gateway aborts them
 * (test/domain/messaging/card-images.test.ts: a fetcher that ignores the abort is waited for).
 */
const test = suite<{ g: SendingGateway; files: FileServer }>('operation 16: a failed card image stops the other downloads')

test.before(async ctx => {
  ctx.files = await fileServer({
    '/falha.png': { body: Buffer.from('não'), status: 404 },
    '/lenta.png': { body: PNG, type: 'image/png', delayMs: 2000 },
    '/rapida.png': { body: PNG, type: 'image/png' },
  })
  ctx.g = await sendingGateway({ allowPrivateUrls: true, mediaMaxBytes: '4mb', mediaBytesInFlight: '6mb', rateLimit: false })
})
test.after(async ctx => {
  await ctx.g.stop()
  await ctx.files.stop()
})

const card = (url: string, id: string) => ({ image_url: url, title: 'Pizza', buttons: [{ type: 'quickReplyButton', displaytext: 'Quero', id }] })

test('one card image 404, another slow: answered 400 with the 404, and the slow download is aborted, not left running', async ({ g, files }) => {
  const answer = await g.send({ to: FRIEND, message: 'Ofertas', cards: [card(`${files.url}/lenta.png`, 'a'), card(`${files.url}/falha.png`, 'b')] })
  assertError(answer, 400, 'O servidor do arquivo respondeu com erro. (HTTP 404)')
  await waitFor(() => [...files.served, ...files.aborted].includes('/lenta.png'), 10_000, 'the slow download to end')
  assert.deepEqual([files.aborted, files.served.includes('/lenta.png')], [['/lenta.png'], false])
  assertOk(await g.send({ to: FRIEND, message: 'Ofertas', cards: [card(`${files.url}/rapida.png`, 'a'), card(`${files.url}/rapida.png`, 'b')] }))
})

test.run()
