import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { baileysTransport } from '../../adapters/transport-baileys/index.ts'
import { FakeBaileys } from '../helpers/fake-baileys/index.ts'
import { connectedBaileysDevice } from '../helpers/baileys-gateway.ts'
import { startGateway } from '../helpers/gateway.ts'

const lids = suite('Baileys transport behind the HTTP API: operation 21 on a group WhatsApp addresses by LID')

const DEVICE_PHONE = '5511999990000'
const DEVICE_LID = '11112222@lid'
const BOB = '5511888880000'

lids('participantes name each member by phone when WhatsApp gave it (as the simulated network and the webhooks do), by LID only when hidden', async () => {
  // WhatsApp now addresses most groups by LID: each participant's jid is a LID, with its phone_number
  // beside it when the number is visible. Operation 21 answered the LIDs, so a client could not tell
  // which of its contacts (or whether the device) is in the group, or which is admin; the simulated
  // network names the same members by phone, as webhooks name senders (the LID only when hidden).
  const fake = new FakeBaileys({})
  const transport = baileysTransport({ ...fake.transportOptions(), reconnect: { initialDelayMs: 5, maxDelayMs: 40, jitter: 0 } })
  const t = await startGateway({ transport })
  try {
    const { authkey } = await t.register()
    await connectedBaileysDevice(t, fake, authkey, { phone: DEVICE_PHONE })
    const group = fake.addGroup({
      subject: 'Clientes',
      members: [{ lid: '77770001@lid', phone: BOB, admin: true }, { lid: DEVICE_LID, phone: DEVICE_PHONE }, { lid: '88880002@lid' }],
    })
    const info = await t.post('/api/groups', { appkey: 'loja', authkey, message: 'false', infoConvite: group.id })
    assert.is(info.status, 200, info.text)
    assert.equal(info.body.grupo.participantes, [
      { id: `${BOB}@s.whatsapp.net`, admin: true },
      { id: `${DEVICE_PHONE}@s.whatsapp.net`, admin: false },
      { id: '88880002@lid', admin: false },
    ])
  } finally {
    await t.stop()
  }
})

lids.run()
