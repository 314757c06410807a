import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { operationTable } from '../../src/operations/table.ts'
import { operationsOf, type PathEntry } from '../../src/operations/operation.ts'
import { BROWSER, launchBrowser } from '../helpers/browser.ts'
import { needing } from '../helpers/requires.ts'
import { startGateway } from '../helpers/gateway.ts'

const docs = suite('/docs in a real browser (Chromium)')
const inBrowser = needing(docs, BROWSER, 'the /docs page in a real browser')

inBrowser('Swagger UI renders every path of the table from local files, without script errors or CSP violations', async () => {
  const browser = await launchBrowser()
  const t = await startGateway()
  const requests: string[] = []
  const problems: string[] = []
  try {
    const tab = await browser.context.newPage()
    tab.on('request', request => void requests.push(request.url()))
    tab.on('console', message => void (message.type() === 'error' && problems.push(message.text())))
    tab.on('pageerror', error => void problems.push(error.message))
    assert.is((await tab.goto(`${t.url}/docs`))?.status(), 200)
    await tab.locator('.opblock').first().waitFor({ state: 'visible', timeout: 15_000 })
    const paths = await tab.locator('.opblock-summary-path').allTextContents()
    for (const entry of operationTable)
      assert.ok(
        paths.some(path => path.replace(/\u200b/g, '') === entry.path),
        `${entry.path} is shown`,
      )

    await tab.locator('.opblock-summary', { hasText: '/api/create-message' }).first().click()
    const opened = tab.locator('.opblock.is-open')
    await opened.waitFor({ state: 'visible' })
    const text = (await opened.textContent()) ?? ''
    for (const operation of operationsOf((operationTable as readonly PathEntry[]).find(entry => entry.path === '/api/create-message')!))
      assert.ok(text.includes(operation.name), `${operation.name} is listed`)

    assert.equal(
      requests.filter(url => !url.startsWith(t.url) && !url.startsWith('data:')),
      [],
      'everything comes from the gateway: no CDN',
    )
    assert.equal(problems, [], 'no script errors or CSP violations')
  } finally {
    await t.stop()
    await browser.close()
  }
})

docs.run()
