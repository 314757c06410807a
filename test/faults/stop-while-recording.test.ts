import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Storage } from '../../src/ports/storage.ts'
import { startGateway, waitFor } from '../helpers/gateway.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { DEVICE_PHONE } from '../helpers/messaging.ts'
import { freePort, tempDir } from '../helpers/standalone.ts'
import { switchable } from '../helpers/switchable-storage.ts'

/**
 * A graceful stop while an incoming message is being recorded: the store call under way (its device's
 * read) fails after the stop began, the store gone. The transport is told the message was recorded, so
 * it must be kept where the next start finds it (the spill file), as the events already waiting when
 * the stop began are; before, it went into the memory of a buffer already put away, lost without a word.
 */
const test = suite('a graceful stop while an incoming message is being recorded')

const CONTACT = '5511988880001'

/** A switchable store whose next read of `key`, once `hold` armed it, waits until `fail` takes the store down and refuses it. */
function holdingStore() {
  const store = switchable(memoryStorage())
  let held: { key: string; reached: () => void; failed: Promise<never> } | undefined
  const inner = store.storage
  const storage: Storage = {
    ...inner,
    get: <T>(key: string) => {
      if (held?.key !== key) return inner.get<T>(key)
      const { reached, failed } = held
      held = undefined
      reached()
      return failed
    },
  }
  return {
    storage,
    hold(key: string) {
      let fail!: () => void
      let reached!: () => void
      const failed = new Promise<never>((_, reject) => (fail = () => ((store.down = true), reject(new Error('ECONNREFUSED')))))
      failed.catch(() => {})
      held = { key, reached: () => reached(), failed }
      return { reached: new Promise<void>(resolve => (reached = resolve)), fail: () => fail() }
    },
  }
}

test('a message whose device read fails after the stop began is left in the spill file, not lost', async () => {
  const spillDir = tempDir('zapgate-spill-')
  const store = holdingStore()
  // cacheTtlMs 0: the message reads its device from the store.
  const t = await startGateway({ storage: store.storage, cacheTtlMs: 0, allowPrivateUrls: true, rateLimit: false, spillDir })
  let stopped = false
  try {
    const { authkey } = await t.register()
    const device = await t.linkedDevice(authkey, 'loja', DEVICE_PHONE, { webhook: `http://127.0.0.1:${await freePort()}/hook` })
    const read = store.hold(`device:${device.id}`)
    const sent = t.network.sendFromPhone(CONTACT, DEVICE_PHONE, { type: 'text', text: 'as the gateway stops' })
    await read.reached
    const stopping = t.stop().finally(() => (stopped = true))
    // The stop runs on while the read waits, past the transport's stop (its sessions closed); then the store goes away, refusing the read.
    await waitFor(() => t.network.stats().connections === 0, 5_000, 'the transport to stop')
    read.fail()
    const id = await sent
    await stopping
    const spilled = readdirSync(spillDir)
      .filter(name => name.startsWith('incoming-'))
      .map(name => readFileSync(join(spillDir, name), 'utf8'))
      .join('')
    assert.ok(spilled.includes(id), 'the message is in the incoming spill file')
  } finally {
    if (!stopped) await t.stop().catch(() => {})
  }
})

test.run()
