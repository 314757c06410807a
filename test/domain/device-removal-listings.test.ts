import { randomBytes, randomUUID } from 'node:crypto'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import type { Storage } from '../../src/ports/storage.ts'
import { formatWallClock } from '../../src/domain/messaging/schedule-time.ts'
import { startGateway, waitFor, type TestGateway } from '../helpers/gateway.ts'
import { FRIEND } from '../helpers/messaging.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'
import { needing, REDIS } from '../helpers/requires.ts'

/**
 * Operation 6 on Redis: each listing of a prefix is a SCAN of the whole keyspace (MATCH filters
 * after), so a device deletion costs as many keyspace passes as it makes listings. What a deleted
 * device owns goes (its agent, flow conversations, reply windows, taken texts, scheduled messages,
 * OTP codes, pending webhook events and dead letters), the other device's stays, and the deletion
 * lists no more prefixes than it needs.
 */
const test = suite<{ t?: TestGateway; receiver?: Receiver; storage?: Storage }>('device removal on Redis: what it lists, what it leaves')
const redis = needing(test, REDIS, 'the device-removal listing test on Redis')

test.after.each(async ctx => {
  await ctx.t?.stop()
  await ctx.receiver?.stop()
  if (ctx.storage) for await (const [key] of ctx.storage.list('')) await ctx.storage.delete(key)
  await ctx.storage?.close!()
})

redis('operation 6 removes every record of the device, keeps the other device, and lists each prefix it needs once', async ctx => {
  const storage = (ctx.storage = await storageFromUrl(REDIS.value!, { namespace: `removal-${randomBytes(4).toString('hex')}` }))
  const listed: string[] = []
  const list = storage.list.bind(storage)
  storage.list = <T>(prefix: string) => (listed.push(prefix), list<T>(prefix))
  // Webhooks fail: each device's events stay pending in the outbox.
  const receiver = (ctx.receiver = await startReceiver(() => 500))
  const t = (ctx.t = await startGateway({ storage, allowPrivateUrls: true, agentResponder: ({ text }) => `re: ${text}`, webhookRetryMs: [600_000] }))
  const { authkey } = await t.register()
  const devices = []
  for (const [name, phone] of [
    ['gone', '5511999990001'],
    ['kept', '5511999990009'],
  ]) {
    const device = await t.linkedDevice(authkey, name, phone, { webhook: receiver.url })
    const keys = { authkey, appkey: device.appkey }
    assert.is((await t.post('/api/v2/ia', { authkey, device: name, agent_name: 'Atendente' })).status, 200)
    await t.network.sendFromPhone(FRIEND, phone, { type: 'text', text: 'oi' })
    await waitFor(
      () => t.network.inbox(FRIEND).filter(entry => entry.type === 'text' && entry.text === 're: oi').length === devices.length + 1,
      5000,
      'the reply',
    )
    const later = formatWallClock(Math.ceil((Date.now() + 86_400_000) / 1000) * 1000, 'UTC')
    assert.is((await t.post('/api/create-message', { ...keys, to: FRIEND, message: 'amanhã', agendamento: later })).status, 200)
    assert.is((await t.post('/api/create-message', { ...keys, to: FRIEND, enviarOTP: 'true' })).status, 200)
    await storage.set(`webhook-dead:${randomUUID()}`, { deviceId: device.id, event: 'message', body: {} }) // a dead letter of the device
    devices.push(device)
  }
  await waitFor(async () => (await entriesOf(storage)).filter(([key]) => key.startsWith('webhook-outbox:')).length >= 4, 5000, 'pending webhook events')
  const [gone, kept] = devices
  const before = await entriesOf(storage)
  // A device's records: keyed by its id, its agents, and its dead letters (keyed by their own id, naming it).
  const owned = async (device: { id: string }) => {
    const agents = new Set(((await storage.get<{ agentIds: string[] }>(`device:${device.id}`))?.agentIds ?? []).map(id => `agent:${id}`))
    return (entries: Entries) =>
      entries
        .filter(([key, value]) => key.includes(device.id) || agents.has(key) || (key.startsWith('webhook-dead:') && value.includes(device.id)))
        .map(([key]) => key)
        .sort()
  }
  const [ofGone, ofKept] = [await owned(gone), await owned(kept)]
  for (const kind of ['agent:', 'flow:', 'flow-replies:', 'flow-taken:', 'schedule:', 'otp:', 'webhook-outbox:', 'webhook-dead:'])
    for (const of of [ofGone, ofKept])
      assert.ok(
        of(before).some(key => key.startsWith(kind)),
        `a ${kind} record before the deletion`,
      )

  listed.length = 0
  const deleted = await t.post('/api/developer', { authkey, message: 'gone', apagarDispositivo: 'true' })
  assert.is(deleted.status, 200, deleted.text)
  const removalListed = [...listed]
  const after = await entriesOf(storage)
  assert.equal(ofGone(after), [], 'nothing of the deleted device is left')
  assert.equal(ofKept(after), ofKept(before), "the other device's records are all kept")
  console.log(`device deletion listed ${removalListed.length} prefixes: ${removalListed.join(', ')}`)
  assert.equal(removalListed.length, new Set(removalListed).size, 'no prefix is listed twice')
  assert.ok(removalListed.length <= LISTINGS, `${removalListed.length} listings (at most ${LISTINGS}): ${removalListed.join(', ')}`)
})

/**
 * The listings a device deletion needs (measured: 7 with the memory transport, 8 SCAN passes per listing on a Redis of 7,000
 * keys; the Baileys transport lists its auth state too): one per kind whose keys it cannot know, each under its collection's
 * name (`schedule:`, `otp:`, `flow:`, `flow-replies:`, `flow-taken:`, `flow-lid:`, `webhook-outbox:`, then the device id), so
 * no common prefix covers two, and the dead letters (`webhook-dead:<id>`, found by their `deviceId`). A new kind of device
 * record raises this on purpose: 8 since the contacts' LID-to-phone pairs of the flow conversations (`flow-lid:`, 7f134b5).
 */
const LISTINGS = 8

type Entries = Array<[key: string, json: string]>

/** Every entry of the storage, its value as JSON. */
async function entriesOf(storage: Storage): Promise<Entries> {
  const entries: Entries = []
  for await (const [key, value] of storage.list('')) entries.push([key, JSON.stringify(value)])
  return entries
}

test.run()
