import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { eventId, outboxKey } from '../../src/domain/webhooks/outbox-store.ts'
import { webhookPayload } from '../../src/domain/webhooks/payload.ts'
import type { IncomingMessage } from '../../src/ports/transport.ts'
import { internalsOf } from '../../src/internals.ts'
import { startGateway, waitFor, type TestGateway } from '../helpers/gateway.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { freePort, tempDir } from '../helpers/standalone.ts'
import { switchable } from '../helpers/switchable-storage.ts'

/**
 * Webhook events the outbox could not write (the store refused: its device was cached, so the message
 * itself got through) wait in the outbox's own buffer. Once the store answers again they are written at
 * once, as the incoming events are: before, they waited for the buffer's next retry (up to 30 s later),
 * their webhooks late, and lost if the process was killed meanwhile. A graceful stop while the store is
 * still down leaves them in the spill file, and a later process replays them.
 */
const test = suite('webhook events the outbox kept, once the store answers again')

const DEVICE_PHONE = '5511999990001'
const CONTACT = '5511988880001'

/** A gateway on a switchable store whose device records stay cached, with a linked device whose webhook receiver is never there. */
async function gatewayWithCachedDevice(spillDir: string) {
  const inner = memoryStorage()
  const store = switchable(inner)
  const t = await startGateway({ storage: store.storage, cacheTtlMs: 60_000, allowPrivateUrls: true, rateLimit: false, spillDir })
  const { authkey } = await t.register()
  // The events stay in the outbox (nobody receives them), where the test looks for them.
  const device = await t.linkedDevice(authkey, 'loja', DEVICE_PHONE, { webhook: `http://127.0.0.1:${await freePort()}/hook` })
  const stored = async (messageId: string) => {
    const message: IncomingMessage = {
      id: messageId,
      chat: CONTACT,
      from: CONTACT,
      to: DEVICE_PHONE,
      fromMe: false,
      isGroup: false,
      timestamp: 0,
      content: { kind: 'text', text: '' },
    }
    return (await inner.get(`webhook-outbox:${outboxKey(device.id, eventId(device.id, webhookPayload(device, message)!))}`)) !== undefined
  }
  return { inner, store, t, stored }
}

/** A message received while the store is down: the outbox keeps its event (the incoming buffer keeps nothing). */
async function messageWhileDown(t: TestGateway, store: { down: boolean }): Promise<string> {
  store.down = true
  const id = await t.network.sendFromPhone(CONTACT, DEVICE_PHONE, { type: 'text', text: 'while the store is down' })
  assert.is(internalsOf(t.gateway).incoming.size, 0, 'the message itself was recorded: its device is cached')
  assert.is(t.gateway.webhooks.unrecordedCount, 1, 'its webhook event waits in the outbox’s buffer')
  return id
}

test('an event the outbox kept is written as soon as the store answers again, not at its buffer’s next retry', async () => {
  const { store, t, stored } = await gatewayWithCachedDevice(tempDir('zapgate-spill-'))
  try {
    const id = await messageWhileDown(t, store)
    // Past the buffer's retries at 1 s and 3 s, which fail: its next one is 4 s after the second.
    await new Promise(resolve => setTimeout(resolve, 3_500))
    assert.not.ok(await stored(id))

    store.down = false
    await t.register() // a store call, answered: the store is back
    await waitFor(() => stored(id), 1_000, 'the kept event to be written once the store answered')
    assert.is(t.gateway.webhooks.unrecordedCount, 0)
  } finally {
    store.down = false
    await t.stop()
  }
})

test('a graceful stop with the store still down leaves the kept event in the spill file, and a later process writes it', async () => {
  const spillDir = tempDir('zapgate-spill-')
  const { inner, store, t, stored } = await gatewayWithCachedDevice(spillDir)
  let next: TestGateway | undefined
  try {
    const id = await messageWhileDown(t, store)
    await t.stop()
    const [file, ...others] = readdirSync(spillDir).filter(name => name.startsWith('webhooks-'))
    assert.is(others.length, 0)
    assert.ok(readFileSync(join(spillDir, file!), 'utf8').includes(id), 'the event is in the spill file')
    // As if this process were gone: its file carries the pid of a process that is gone.
    const gone = spawnSync(process.execPath, ['-e', '0']).pid
    renameSync(join(spillDir, file!), join(spillDir, file!.replace(new RegExp(`-${process.pid}(?=[-.])`), `-${gone}`)))

    store.down = false
    // Its instance record, which it could not remove (the store was down), would hold the next gateway until its heartbeat lapses (15 s).
    for await (const [key] of inner.list('instance:')) await inner.delete(key)
    next = await startGateway({ storage: inner, allowPrivateUrls: true, rateLimit: false, spillDir })
    await waitFor(() => stored(id), 5_000, 'the next process to write the spilled event')
  } finally {
    store.down = false
    await t.stop().catch(() => {})
    await next?.stop()
  }
})

test.run()
