import assert from 'node:assert/strict'
import pino from 'pino'
import { suite } from 'uvu'
import { MediaLinks } from '../../src/domain/media-links.ts'
import type { Storage } from '../../src/ports/storage.ts'
import { startGateway } from '../helpers/gateway.ts'
import { request } from '../helpers/http.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'

/**
 * A QR share link (`/qr/<token>`: whoever opens it can link a phone to the device) and a media link
 * (`/media/<token>`) are capabilities: their tokens must not reach the logs, also when the request
 * fails (an error is logged with where it happened).
 */
const test = suite('link tokens never reach the logs, also when their request fails')

/** A store whose reads of the keys starting with one of `prefixes` fail while `down.on` holds. */
function failingReads(storage: Storage, prefixes: string[], down: { on: boolean }): Storage {
  return new Proxy(storage, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function') return value
      if (name !== 'get') return value.bind(target)
      return async (key: string) => {
        if (down.on && prefixes.some(prefix => key.startsWith(prefix))) throw new Error('the store is down')
        return value.call(target, key)
      }
    },
  })
}

test('a share page and a media link whose store read fails answer an error, and the log names neither token', async () => {
  const lines: string[] = []
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) })
  const down = { on: false }
  const tokens: Record<string, string> = {}
  const storage = memoryStorage()
  const t = await startGateway({ logger, storage: failingReads(storage, ['share-link:', 'media-link-key'], down) })
  try {
    const { authkey } = await t.register()
    const { answer, id } = await t.addDevice(authkey, 'loja')
    const shareToken = (tokens.share = new URL(answer.body.link).pathname.split('/qr/')[1])
    // Signed as the gateway signs (its key in the store); the gateway reads that key on its first media request.
    const mediaToken = (tokens.media = await new MediaLinks(storage).sign({
      deviceId: id,
      message: { chat: '5511900001111', id: '3EB0A1B2C3D4E5F60718', fromMe: false },
    }))
    assert.equal((await request(`${t.url}/qr/${shareToken}/state`)).status, 200, 'the link works while the store does')
    down.on = true
    const statuses = [(await request(`${t.url}/qr/${shareToken}`)).status, (await request(`${t.url}/media/${mediaToken}`)).status]
    assert.ok(
      statuses.every(status => status >= 500),
      `the failures are answered as such: ${statuses}`,
    )
  } finally {
    down.on = false
    await t.stop()
  }
  const log = lines.join('')
  assert.ok(log.includes('the store is down'), 'the failures are logged')
  for (const [name, token] of Object.entries(tokens)) assert.ok(token.length >= 20 && !log.includes(token), `the ${name} token is in the logs`)
})

test.run()
