import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { webhookPayload } from '../../../src/domain/webhooks/payload.ts'
import type { IncomingMessage } from '../../../src/ports/transport.ts'

const test = suite('webhook payload: fields of a transport message')

const device = { id: 'd1' }
const base = { id: 'M1', chat: '5511988880002', to: '5511999990001', fromMe: false, isGroup: false, timestamp: 1795313024220 }

// A transport written in JavaScript, or one that maps a protobuf's `string | null` fields as they come
// (as the Baileys adapter would without its `clean`), gives null where the port says "absent".
const nulls = (message: Record<string, unknown>) => message as unknown as IncomingMessage

test("a transport's null in an optional field is left out of the body, as docs/api.md promises (never null)", () => {
  const envelope = { ...base, from: '5511988880002', fromLid: null, pushName: null, group: null }
  const bodies = [
    webhookPayload(device, nulls({ ...envelope, content: { kind: 'image', caption: null, fileName: null, mimetype: 'image/jpeg', base64: null, url: null } })),
    webhookPayload(device, nulls({ ...envelope, content: { kind: 'contact', name: 'Ana', phone: null, vcard: null, contacts: null } })),
    webhookPayload(device, nulls({ ...envelope, content: { kind: 'location', latitude: 1, longitude: 2, name: null } })),
    webhookPayload(device, nulls({ ...envelope, content: { kind: 'button', buttonId: 'b1', text: null, target: null, list: null } })),
  ]
  for (const body of bodies) {
    const nullFields = Object.entries(body!).filter(([, value]) => value === null)
    assert.equal(nullFields, [], `${body!.event}: ${JSON.stringify(body)}`)
  }
  assert.equal(Object.keys(bodies[0]!).slice(-1), ['mimetype'])
  assert.is(bodies[3]!.event, 'Botão')
})

test.run()
