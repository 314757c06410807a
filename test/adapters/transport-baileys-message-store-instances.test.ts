import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as baileys from '@whiskeysockets/baileys'
import { MessageStore } from '../../adapters/transport-baileys/message-store.ts'
import type { BaileysModule } from '../../adapters/transport-baileys/types.ts'
import { BOB_JID, waMessage } from '../helpers/baileys-fixtures.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'

const CAROL_JID = '5511777770000@s.whatsapp.net'

// Two instances (a device handed over while the old holder still remembers what it received, or two
// processes of a cluster) remember messages that share an id (ids are chosen by senders). remember()
// reads the id's records, adds its own and writes them back, serialised per process only: both read
// the same records and the second write drops the first's record (its read receipt, reaction or
// media download later answers not-found).
test('two instances remembering messages of one id at once on a shared store keep both', async () => {
  const shared = memoryStorage()
  // Each get takes a moment (a network store): both instances read before either writes.
  const slow = new Proxy(shared, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (name !== 'get' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value
      return async (...args: unknown[]) => {
        const result = await value.apply(target, args)
        await new Promise(resolve => setTimeout(resolve, 20))
        return result
      }
    },
  })
  const lib = baileys as unknown as BaileysModule
  const first = new MessageStore(slow, 'device:dev:msg:', 60_000, lib)
  const second = new MessageStore(slow, 'device:dev:msg:', 60_000, lib)
  await Promise.all([
    first.remember(waMessage({ chat: BOB_JID, id: 'SAMEID', message: { conversation: 'from Bob' } }), false),
    second.remember(waMessage({ chat: CAROL_JID, id: 'SAMEID', message: { conversation: 'from Carol' } }), false),
  ])
  const chats = (await first.all('SAMEID')).map(stored => stored.key.remoteJid).sort()
  assert.equal(chats, [CAROL_JID, BOB_JID].sort())
})

test.run()
