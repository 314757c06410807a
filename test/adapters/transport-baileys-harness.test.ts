import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { baileysHarness } from '../helpers/baileys-harness.ts'
import { waitFor } from '../helpers/fake-baileys/index.ts'

const harness = suite('Baileys contract harness over the fake network')

const open = (h: Awaited<ReturnType<typeof baileysHarness>>, id: string) =>
  waitFor(() => h.events.some(e => e.type === 'status' && e.deviceId === id && e.status.state === 'open'), `${id} open`)

harness('completes QR and pairing-code links, refusing a stale challenge', async () => {
  const h = await baileysHarness()
  const stale = await h.transport.link('a', {})
  const fresh = await h.transport.link('a', {})
  try {
    await h.completeLink('a', stale, '5511999990001')
    assert.unreachable('a stale QR must not complete the link')
  } catch (error) {
    assert.match((error as Error).message, /not the one/)
  }
  await h.completeLink('a', fresh, '5511999990001')
  await open(h, 'a')
  const code = await h.transport.link('b', { phone: '5511999990002', code: '12345678' })
  await h.completeLink('b', code, '5511999990002')
  await open(h, 'b')
  assert.is((await h.transport.status('b')).phone, '5511999990002')
  await h.close()
})

harness('delivers port-shaped content, reports sends in port terms, and survives a restart', async () => {
  const h = await baileysHarness()
  await h.completeLink('a', await h.transport.link('a', {}), '5511999990001')
  await open(h, 'a')
  const id = await h.deliver('a', { from: '5511988880002', content: { kind: 'image', mimetype: 'image/png', caption: 'pic', base64: 'AAEC' } })
  await waitFor(() => h.events.some(e => e.type === 'message' && e.message.id === id), 'the message event')
  const event = h.events.find(e => e.type === 'message' && e.message.id === id)
  assert.equal(event?.type === 'message' && event.message.content, { kind: 'image', mimetype: 'image/png', caption: 'pic', base64: 'AAEC' })
  const text = await h.transport.send('a', '5511988880002', { kind: 'text', text: 'hi' })
  const buttons = await h.transport.send('a', '5511988880002', { kind: 'buttons', text: 'b', buttons: [{ type: 'reply', id: 'x', text: 'X' }] })
  assert.equal(await h.sent('a'), [
    { id: text.id, to: '5511988880002', kind: 'text', text: 'hi' },
    { id: buttons.id, to: '5511988880002', kind: 'buttons' },
  ])
  await h.restart()
  const mark = h.events.length
  await h.transport.connect('a')
  await waitFor(() => h.events.slice(mark).some(e => e.type === 'status' && e.status.state === 'open'), 'open after restart')
  await h.close()
})

harness.run()
