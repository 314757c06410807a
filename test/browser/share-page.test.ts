import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { MemoryNetwork, memoryTransport } from '../../adapters/transport-memory/index.ts'
import { BROWSER, launchBrowser, readQr } from '../helpers/browser.ts'
import { needing } from '../helpers/requires.ts'
import { startGateway, waitFor } from '../helpers/gateway.ts'
import { internalsOf } from '../../src/internals.ts'

const DEVICE_PHONE = '5511933334444'

/** What the page scripts below read (the project's TypeScript has no DOM library). */
type PageGlobals = { document: { body: { dataset: Record<string, string | undefined> } } }

/** The page's state (`waiting`, `connected`, `revoked`): runs inside the page (the CSP forbids string evaluation). */
const pageState = () => (globalThis as unknown as PageGlobals).document.body.dataset.state

type Ctx = { browser: Awaited<ReturnType<typeof launchBrowser>> }
const page = suite<Ctx>('QR share page in a real browser (Chromium)')
const inBrowser = needing(page, BROWSER, 'the QR share page in a real browser')
page.before(async ctx => {
  if (BROWSER.value) ctx.browser = await launchBrowser()
})
page.after(ctx => ctx.browser?.close())

inBrowser('shows the current QR of an unlinked device, turns to connected once linked, and answers 404 once revoked', async ({ browser }) => {
  const t = await startGateway()
  const tab = await browser.context.newPage()
  const problems: string[] = []
  tab.on('console', message => void (message.type() === 'error' && problems.push(message.text())))
  tab.on('pageerror', error => void problems.push(error.message))
  try {
    const { authkey } = await t.register()
    const added = await t.post('/api/developer', { authkey, message: 'vitrine', conecteQR: 'true' })
    assert.is(added.status, 200)
    const opened = await tab.goto(added.body.link)
    assert.is(opened?.status(), 200)
    const qr = tab.locator('#qr')
    await qr.waitFor({ state: 'visible' })
    const shown = await readQr(qr)
    assert.ok(shown, 'a QR code decodes from a screenshot of the page')
    assert.is(shown, await internalsOf(t.gateway).links.currentQr(added.body.id), "it is the device's current QR")
    assert.is(await tab.evaluate(pageState), 'waiting')

    await t.network.scan({ deviceId: added.body.id }, DEVICE_PHONE)
    await tab.waitForFunction(() => (globalThis as unknown as PageGlobals).document.body.dataset.state === 'connected', null, { timeout: 15_000 })
    assert.ok(await tab.locator('#connected').isVisible(), 'the page says the device is connected')
    assert.not.ok(await qr.isVisible(), 'the QR is gone')

    const revoked = await t.post('/api/developer', { authkey, appkey: 'vitrine', message: 'false', to: 'vitrine', GerenciarLinks: 'excluir' })
    assert.is(revoked.status, 200)
    const reloaded = await tab.reload()
    assert.is(reloaded?.status(), 404)
    assert.match((await tab.textContent('body')) ?? '', /Link inválido, expirado ou excluído/)
    assert.equal(
      problems.filter(text => !/404/.test(text)),
      [],
      'no script errors or CSP violations',
    )
  } finally {
    await tab.close()
    await t.stop()
  }
})

inBrowser('follows a QR rotation of the network', async ({ browser }) => {
  const network = new MemoryNetwork()
  const t = await startGateway({ network, transport: memoryTransport({ network, qrRefreshMs: 2500 }) })
  const tab = await browser.context.newPage()
  try {
    const { authkey } = await t.register()
    const added = await t.post('/api/developer', { authkey, message: 'rotativo', conecteQR: 'true' })
    await tab.goto(added.body.link)
    const qr = tab.locator('#qr')
    await qr.waitFor({ state: 'visible' })
    const first = await readQr(qr)
    assert.ok(first)
    await waitFor(
      async () => {
        const shown = await readQr(qr)
        return shown !== undefined && shown !== first && shown === (await internalsOf(t.gateway).links.currentQr(added.body.id))
      },
      20_000,
      'the page to show the rotated QR',
    )
  } finally {
    await tab.close()
    await t.stop()
  }
})

page.run()
