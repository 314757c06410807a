import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as baileys from '@whiskeysockets/baileys'
import { MessageStore } from '../../adapters/transport-baileys/message-store.ts'
import type { BaileysModule } from '../../adapters/transport-baileys/types.ts'
import { BOB_JID, waMessage } from '../helpers/baileys-fixtures.ts'
import { withFakeClock } from '../helpers/fake-clock.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'

const CAROL_JID = '5511777770000@s.whatsapp.net'
const TTL_MS = 1_000
const lib = baileys as unknown as BaileysModule

// The records of one id share one store entry (ids are the sender's choice: a contact may reuse any).
// Each is remembered for `messageTtlMs` from when it was remembered: another message written under its
// id later (or one of them forgotten) must not give the older records a new ttl.
test('a record is found no more messageTtlMs after it was remembered, though another message of its id was remembered since', () =>
  withFakeClock(async clock => {
    const store = new MessageStore(memoryStorage(), 'device:dev:msg:', TTL_MS, lib)
    await store.remember(waMessage({ chat: BOB_JID, id: 'SAMEID', message: { conversation: 'from Bob' } }), false)
    await clock.advance(800)
    await store.remember(waMessage({ chat: CAROL_JID, id: 'SAMEID', message: { conversation: 'from Carol' } }), false)
    await clock.advance(300) // Bob's record is 1.1 s old, Carol's 0.3 s
    assert.equal(
      (await store.all('SAMEID')).map(stored => stored.key.remoteJid),
      [CAROL_JID],
      "Bob's record expired; Carol's is kept",
    )
    await clock.advance(800)
    assert.equal(await store.all('SAMEID'), [], "Carol's record expired too")
  }))

test('forgetting one record of an id leaves the others their own ttl', () =>
  withFakeClock(async clock => {
    const store = new MessageStore(memoryStorage(), 'device:dev:msg:', TTL_MS, lib)
    await store.remember(waMessage({ chat: BOB_JID, id: 'SAMEID', message: { conversation: 'from Bob' } }), false)
    await store.remember(waMessage({ chat: CAROL_JID, id: 'SAMEID', message: { conversation: 'from Carol' } }), false)
    await clock.advance(800)
    await store.forget({ remoteJid: CAROL_JID, fromMe: false, id: 'SAMEID' })
    await clock.advance(300)
    assert.equal(await store.all('SAMEID'), [], "Bob's record expired")
  }))

test.run()
