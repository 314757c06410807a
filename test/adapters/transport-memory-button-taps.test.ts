import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { TransportError } from '../../src/ports/transport.ts'
import type { IncomingMessage } from '../../src/ports/transport.ts'
import { linkAs, memoryHarness } from './memory-harness.ts'

const PHONE = '5511999990001'
const FRIEND = '5511988880002'
const invalid = (err: unknown) => err instanceof TransportError && err.code === 'invalid'

const test = suite('transport-memory: button taps')

test('a phone taps only a quick reply its message shows: an unknown id, a URL or call button is refused (400 on /_sim/send), as a phone cannot', async () => {
  const h = await memoryHarness()
  await linkAs(h, 'd1', PHONE)
  const buttons = await h.transport.send('d1', FRIEND, {
    kind: 'buttons',
    text: 'Escolha',
    buttons: [
      { type: 'reply', id: 'sim', text: 'Sim' },
      { type: 'url', text: 'Site', url: 'https://example.com' },
      { type: 'call', text: 'Ligar', phone: '+551133334444' },
    ],
  })
  const png = { data: Buffer.from('png'), mimetype: 'image/png' }
  const carousel = await h.transport.send('d1', FRIEND, {
    kind: 'carousel',
    text: 'Ofertas',
    cards: [
      { image: png, title: 'A', buttons: [{ type: 'reply', id: 'quero-a', text: 'Quero' }] },
      { image: png, title: 'B', buttons: [{ type: 'reply', id: 'quero-b', text: 'Quero' }] },
    ],
  })
  // Taps a phone can make: a quick reply of the buttons, of either card; a list row keeps its own ids.
  await h.network.sendFromPhone(FRIEND, PHONE, { type: 'button', target: buttons.id, buttonId: 'sim', text: 'Sim' })
  await h.network.sendFromPhone(FRIEND, PHONE, { type: 'button', target: carousel.id, buttonId: 'quero-b', text: 'Quero' })
  await h.network.sendFromPhone(FRIEND, PHONE, { type: 'button', target: buttons.id, buttonId: 'linha-2', text: 'Linha 2', list: true })
  // Taps no phone can make: refused like a tap on a message without buttons, nothing delivered.
  for (const [target, buttonId] of [
    [buttons.id, 'nao'],
    [buttons.id, 'Site'],
    [buttons.id, 'Ligar'],
    [carousel.id, 'sim'],
  ]) {
    await assert.rejects(h.network.sendFromPhone(FRIEND, PHONE, { type: 'button', target, buttonId }), invalid, `${target} ${buttonId}`)
  }
  await h.network.settled()
  const taps = h.events
    .filter((e): e is { type: 'message'; deviceId: string; message: IncomingMessage } => e.type === 'message')
    .map(e => e.message.content)
    .filter(c => c.kind === 'button')
    .map(c => c.buttonId)
  assert.deepEqual(taps, ['sim', 'quero-b', 'linha-2'])
  await h.close()
})

test.run()
