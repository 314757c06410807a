import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PNG } from 'pngjs'
import jsQR from 'jsqr'
import type { BrowserContext, Locator } from 'playwright-core'
import type { Service } from './requires.ts'

/** Where Debian's `chromium` package installs the browser (`.ci/run` installs it when missing). */
export const CHROMIUM = '/usr/bin/chromium'

/** A real browser, for the browser tests (see `needing` in requires.ts). */
export const BROWSER: Service = {
  name: `Chromium at ${CHROMIUM}`,
  value: existsSync(CHROMIUM) ? CHROMIUM : undefined,
  how: 'apt-get install -y chromium; .ci/run installs it',
}

/** A headless Chromium with a fresh profile; `close()` also deletes the profile. */
export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const { chromium } = await import('playwright-core')
  const profile = mkdtempSync(join(tmpdir(), 'zapgate-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  return {
    context,
    async close() {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}

/** The text of the QR code an element shows, read from a screenshot of it (undefined when none decodes). */
export async function readQr(element: Locator): Promise<string | undefined> {
  const image = PNG.sync.read(await element.screenshot())
  // jsqr is CommonJS typed as an ES module: its function is `.default` of what Node imports.
  return jsQR.default(new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.length), image.width, image.height)?.data
}
