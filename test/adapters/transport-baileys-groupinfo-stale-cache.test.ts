import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { GroupMetadata } from '@whiskeysockets/baileys'
import { linkedBaileys } from '../helpers/baileys-setup.ts'
import { settle, waitFor } from '../helpers/fake-baileys/index.ts'
import { BOB, ME } from '../helpers/baileys-fixtures.ts'

const CARLA = '5511777770000'

// groupInfo() caches the metadata it fetched, unconditionally. A member added while that fetch is
// under way (group-participants.update) is then missing from the cache that Baileys' group sends
// use (cachedGroupMetadata), for the cache's hour: the new member's devices get no sender key with
// the device's messages. The send-time fetch (GroupCache.lookup) guards against exactly this
// (changedWhileFetching); groupInfo does not.
test('a member added while groupInfo() fetches the metadata is in the metadata group sends then use', async () => {
  const s = await linkedBaileys()
  try {
    const group = s.fake.addGroup({ subject: 'Team', members: [{ phone: ME }, { phone: BOB }] })
    const socket = s.fake.current('dev')
    const fetch = socket.groupMetadata.bind(socket)
    let answer!: () => void
    let asked = false
    socket.groupMetadata = async (jid: string): Promise<GroupMetadata> => {
      const snapshot = await fetch(jid) // the answer WhatsApp gave, before Carla was added
      asked = true
      await new Promise<void>(resolve => (answer = resolve))
      return snapshot
    }
    const info = s.transport.groupInfo('dev', { id: group.id })
    await waitFor(() => asked, 'the metadata query')
    group.participants.push({ id: `${CARLA}@s.whatsapp.net`, admin: null })
    socket.ev.emit('group-participants.update', {
      id: group.id,
      author: `${ME}@s.whatsapp.net`,
      participants: [{ id: `${CARLA}@s.whatsapp.net`, admin: null }],
      action: 'add',
    })
    await settle()
    answer()
    await info
    socket.groupMetadata = fetch
    const cached = await socket.config.cachedGroupMetadata!(group.id)
    assert.ok(
      cached?.participants.some(p => p.id === `${CARLA}@s.whatsapp.net`),
      `the participants a group send encrypts for include the new member (got ${cached?.participants.map(p => p.id).join(', ')})`,
    )
  } finally {
    await s.transport.stop()
  }
})

test.run()
