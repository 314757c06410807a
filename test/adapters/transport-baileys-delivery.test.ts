import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { TransportEvent } from '../../src/ports/transport.ts'
import { linkedBaileys } from '../helpers/baileys-setup.ts'
import { BOB, GROUP, ME } from '../helpers/baileys-fixtures.ts'
import { settle, waitFor } from '../helpers/fake-baileys/index.ts'

const delivery = suite('Baileys transport: messages WhatsApp reports as not delivered')

const BOB_LID = '99887766554433@lid'

async function open() {
  const s = await linkedBaileys()
  s.fake.addGroup({ id: GROUP, subject: 'G', members: [{ phone: ME }, { phone: BOB }] })
  return s
}

const failures = (events: TransportEvent[]) => events.filter(e => e.type === 'message-failed')

delivery('an error ack (463) on a sent message reports message-failed: its id, the chat as the send named it, the code and what it means', async () => {
  const s = await open()
  const sent = await s.transport.send('dev', BOB, { kind: 'text', text: 'oi' })
  const before = Date.now()
  // WhatsApp acks by the recipient's LID: the chat is still named as the send named it (from the remembered key).
  s.fake.current('dev').errorAck(BOB_LID, sent.id, '463')
  await waitFor(() => failures(s.events).length === 1, 'the failure')
  const [event] = failures(s.events)
  assert.ok(event.type === 'message-failed')
  if (event.type !== 'message-failed') return
  assert.equal(
    { ...event, timestamp: 0 },
    {
      type: 'message-failed',
      deviceId: 'dev',
      messageId: sent.id,
      chat: BOB,
      code: 463,
      reason: 'not delivered: the account is restricted, or has no privacy token for this contact yet (463)',
      timestamp: 0,
    },
  )
  assert.ok(event.timestamp >= before && event.timestamp <= Date.now())
  await s.transport.stop()
})

delivery('a time-locked account (463 with the restriction text), a group send refused with 479, and an unknown message named by its LID', async () => {
  const s = await open()
  s.fake.lidMappings.set(BOB_LID, `${BOB}@s.whatsapp.net`)
  const toGroup = await s.transport.send('dev', GROUP, { kind: 'text', text: 'all' })
  const socket = s.fake.current('dev')
  socket.errorAck(BOB_LID, 'SENT-FROM-THE-PHONE', '463', 'Your account has been restricted')
  socket.errorAck(GROUP, toGroup.id, '479')
  socket.errorAck('5511777770000@s.whatsapp.net', 'OTHER', 'garbled')
  await waitFor(() => failures(s.events).length === 3, 'three failures')
  const seen = failures(s.events).map(e => (e.type === 'message-failed' ? [e.messageId, e.chat, e.code, e.reason] : []))
  assert.equal(seen, [
    ['SENT-FROM-THE-PHONE', BOB, 463, 'Your account has been restricted (463)'],
    [toGroup.id, GROUP, 479, 'not delivered: WhatsApp refused the message stanza (479)'],
    ['OTHER', '5511777770000', undefined, 'not delivered: WhatsApp reported an error'],
  ])
  await s.transport.stop()
})

delivery('other status updates (server ack, delivered, read) and received messages report nothing', async () => {
  const s = await open()
  const sent = await s.transport.send('dev', BOB, { kind: 'text', text: 'oi' })
  const socket = s.fake.current('dev')
  for (const status of [2, 3, 4])
    socket.ev.emit('messages.update', [{ key: { remoteJid: `${BOB}@s.whatsapp.net`, fromMe: true, id: sent.id }, update: { status } }])
  socket.ev.emit('messages.update', [
    { key: { remoteJid: `${BOB}@s.whatsapp.net`, fromMe: false, id: 'IN' }, update: { status: 0, messageStubParameters: ['463'] } },
  ])
  await settle(30)
  assert.equal(failures(s.events), [])
  await s.transport.stop()
})

delivery.run()
