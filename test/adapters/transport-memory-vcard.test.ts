import assert from 'node:assert/strict'
import { suite } from 'uvu'
import type { IncomingMessage } from '../../src/ports/transport.ts'
import { linkAs, memoryHarness } from './memory-harness.ts'

const PHONE = '5511999990001'
const FRIEND = '5511988880002'
const OTHER = '5511977770003'

const test = suite('transport-memory: the vCard of a shared contact')

test('a contact name with a line break of any kind stays inside the vCard FN (escaped as the Baileys adapter writes it), never a line of its own', async () => {
  // Two gateways on one network: a device's contact reaches the other device as the network builds it, and so does a phone's.
  const a = await memoryHarness()
  const b = await memoryHarness({ network: a.network })
  await linkAs(a, 'da', PHONE)
  await linkAs(b, 'db', FRIEND)
  const name = 'Ana\rTEL;waid=1:+1\r\nX\u2028Y, Jr'
  await a.transport.send('da', FRIEND, { kind: 'contact', name, phone: '+55 11 97777-0003' })
  await b.network.sendFromPhone(OTHER, FRIEND, { type: 'contact', name, phone: OTHER })
  await a.network.settled()
  const cards = b.events
    .filter((e): e is { type: 'message'; deviceId: string; message: IncomingMessage } => e.type === 'message')
    .map(e => e.message.content as { kind: string; name: string; phone: string; vcard: string })
  assert.equal(cards.length, 2)
  for (const card of cards) {
    assert.deepEqual([card.kind, card.name, card.phone], ['contact', name, OTHER], 'the name and phone themselves are as sent')
    assert.deepEqual(card.vcard.split(/\r\n|\r|\n|\u2028|\u2029|\u0085/), [
      'BEGIN:VCARD',
      'VERSION:3.0',
      'FN:Ana\\nTEL\\;waid=1:+1\\nX\\nY\\, Jr',
      `TEL;type=CELL;waid=${OTHER}:+${OTHER}`,
      'END:VCARD',
    ])
  }
  await a.close()
  await b.close()
})

test.run()
