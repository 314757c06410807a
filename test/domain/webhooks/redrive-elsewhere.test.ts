import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { changingDevice, device, message, recordingSender, settings } from '../../helpers/outbox.ts'
import { WebhookOutbox } from '../../../src/domain/webhooks/outbox.ts'
import { GatewayEvents } from '../../../src/events.ts'
import { silentLogger } from '../../../src/logger.ts'
import type { Storage } from '../../../src/ports/storage.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'

/**
 * Two gateway processes on one store (two outboxes, each its own liveness, its own delivery loop): B redrives a dead letter while
 * A's attempt, which dead-lettered the event, is still ending (its removal of the record not yet written). What the host relies on
 * (docs/api.md, "A redriven event is attempted at once"): the event reaches its receiver promptly, not after A's claim runs out.
 */
const test = suite('WebhookOutbox: a redrive in another process while the dead-lettering attempt is ending')

test('an event redriven by another process while the attempt that buried it is still ending is delivered at once', async () => {
  const shared = memoryStorage()
  const alive = (id: string | undefined) => id === 'a' || id === 'b'
  // A's removal of the buried record waits until the test lets it go (the dead-lettering under way: its letter written, its record still pending).
  let reached!: () => void
  const removing = new Promise<void>(resolve => (reached = resolve))
  let release!: () => void
  const held = new Promise<void>(resolve => (release = resolve))
  const ofA = shared.connectAgain()
  const deleteIfEqual = ofA.deleteIfEqual.bind(ofA)
  ofA.deleteIfEqual = async (key, expected) => {
    if (key.startsWith('webhook-outbox:')) (reached(), await held)
    return deleteIfEqual(key, expected)
  }
  // The old URL answers 410 (the event dead-lettered as gone); the host sets a new URL and redrives it there.
  const d1 = changingDevice()
  const sender = recordingSender(delivery => (delivery.url.endsWith('/new') ? 200 : 410))
  // The claim lasts 2 × 5 s + 5 s; no rescan within the test.
  const quiet = settings({ timeoutMs: 5_000, reconcileMs: 3_600_000 })
  const gateway = (id: string, storage: Storage) =>
    new WebhookOutbox({
      ...{ storage, lock: new KeyedLock(), devices: d1.devices, sender, events: new GatewayEvents(), logger: silentLogger },
      ...{ settings: quiet, liveness: { id, isAlive: alive, onDeparture() {} } },
    })
  const [a, b] = [gateway('a', ofA), gateway('b', shared)]
  await a.start()
  await b.start()
  try {
    await a.record(device('d1'), message('again'))
    await removing
    const [letter] = await b.deadLetters()
    assert.ok(letter, "A's attempt dead-lettered the event")
    d1.set({ ...d1.current(), webhookUrl: 'https://receiver.example/new' })
    assert.ok(await b.redrive(letter!.id), 'B redrove it')
    release()
    const redrivenAt = Date.now()
    await waitFor(() => sender.sent.length === 2, 20_000, 'the redriven event to be attempted')
    const waited = Date.now() - redrivenAt
    assert.ok(waited < 2_000, `the redriven event waited ${waited} ms (A's claim on its ended attempt) before it was sent`)
    assert.is(sender.sent[1]!.url, 'https://receiver.example/new')
    await waitFor(async () => (await b.pending()) === 0, 5_000, 'the event to be delivered')
    assert.equal(await b.deadLetters(), [])
  } finally {
    release()
    await a.close()
    await b.close()
  }
})

test.run()
