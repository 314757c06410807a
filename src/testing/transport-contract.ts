import assert from 'node:assert/strict'
import { TransportError } from '../ports/transport.ts'
import type { IncomingContent, LinkChallenge, OutgoingMessage, SessionStatus, Transport, TransportEvent } from '../ports/transport.ts'

/** One send as the network side saw it. */
export interface SentRecord {
  /** The id the network gave the message (what `send` resolved with). */
  id: string
  /** Recipient: phone digits, or the group id. */
  to: string
  kind: OutgoingMessage['kind']
  /** The text, for text messages. */
  text?: string
}

/** A message the network delivers to a device, as the contract describes it. */
export interface IncomingSpec {
  /** Sender phone (digits). */
  from: string
  /** Group id, for a message to a group the device belongs to. */
  group?: string
  content: IncomingContent
}

/**
 * The network side of a transport under test: the memory network, or a fake socket for an adapter
 * over a real network library. The harness starts `transport` with a context whose `emit` appends to
 * `events` and whose storage survives `restart`.
 */
export interface TransportHarness {
  /** The transport under test (after `restart`, the new one). */
  transport: Transport
  /** Every event emitted so far (by every transport of this harness), oldest first. */
  events: TransportEvent[]
  /** Complete a pending link as `phone` would: scan the QR or enter the pairing code. */
  completeLink(deviceId: string, challenge: LinkChallenge, phone: string): Promise<void>
  /** The network delivers a message to the device; resolves with the message's network id. */
  deliver(deviceId: string, incoming: IncomingSpec): Promise<string>
  /** What the device has sent to the network, oldest first. */
  sent(deviceId: string): Promise<SentRecord[]>
  /** A process restart: stop the transport, start a new one over the same storage (and network). */
  restart(): Promise<void>
  /** Release everything (timers, sockets). */
  close(): Promise<void>
}

/** Behaviours only some networks show; their tests are registered only when set. */
export interface ContractOptions {
  /** markRead, reaction and delete check that the target message exists (else throw not-found). */
  validatesTargets?: boolean
}

const DEVICE = 'device-1'
const PHONE = '5511999990001'
const FRIEND = '5511988880002'
const OTHER = '5511977770003'

/**
 * The Transport contract: behaviour every Transport shows, whatever network is behind it. Register it
 * with any runner: `transportContract((name, fn) => suite(name, fn), makeHarness)`.
 */
export function transportContract(
  test: (name: string, fn: () => Promise<void>) => void,
  makeHarness: () => Promise<TransportHarness>,
  options: ContractOptions = {},
): void {
  const it = (name: string, body: (h: TransportHarness) => Promise<void>, needs?: keyof ContractOptions) => {
    if (needs && !options[needs]) return
    test(name, async () => {
      const h = await makeHarness()
      try {
        await body(h)
      } finally {
        await h.close()
      }
    })
  }

  it('status of a device never linked is closed and not connected', async h => {
    const status = await h.transport.status('never-seen')
    assert.equal(status.state, 'closed')
    assert.equal(status.connected, false)
  })

  it('link without a phone answers a QR, and scanning it opens the session as that phone', async h => {
    const challenge = await h.transport.link(DEVICE, {})
    assert.equal(challenge.kind, 'qr')
    assert.ok(challenge.kind === 'qr' && challenge.qr.length > 0)
    const mark = h.events.length
    await h.completeLink(DEVICE, challenge, PHONE)
    const event = await waitForStatus(h, mark, DEVICE, 'open')
    assert.equal(event.connected, true)
    assert.equal(event.phone, PHONE)
    assertOpen(await h.transport.status(DEVICE), PHONE)
  })

  it('link with a phone answers that pairing code, and entering it opens the session', async h => {
    const challenge = await h.transport.link(DEVICE, { phone: PHONE, code: '12345678' })
    assert.deepEqual(challenge, { kind: 'code', code: '12345678' })
    const mark = h.events.length
    await h.completeLink(DEVICE, challenge, PHONE)
    await waitForStatus(h, mark, DEVICE, 'open')
    assertOpen(await h.transport.status(DEVICE), PHONE)
  })

  it('link again while linking answers a fresh QR that completes the link', async h => {
    const first = await h.transport.link(DEVICE, {})
    const second = await h.transport.link(DEVICE, {})
    assert.ok(first.kind === 'qr' && second.kind === 'qr')
    assert.notEqual(second.qr, first.qr)
    const mark = h.events.length
    await h.completeLink(DEVICE, second, PHONE)
    await waitForStatus(h, mark, DEVICE, 'open')
  })

  it('link on a connected device throws already-connected', async h => {
    await linkDevice(h)
    await rejectsWith(h.transport.link(DEVICE, {}), 'already-connected')
    await rejectsWith(h.transport.link(DEVICE, { phone: PHONE, code: '12345678' }), 'already-connected')
  })

  it('send on a device that is not connected throws not-connected', async h => {
    await rejectsWith(h.transport.send(DEVICE, FRIEND, { kind: 'text', text: 'hi' }), 'not-connected')
    await h.transport.link(DEVICE, {})
    await rejectsWith(h.transport.send(DEVICE, FRIEND, { kind: 'text', text: 'hi' }), 'not-connected')
  })

  it('send text resolves with the network id and a timestamp, and the network receives it', async h => {
    await linkDevice(h)
    const before = Date.now()
    const sent = await h.transport.send(DEVICE, FRIEND, { kind: 'text', text: 'hello' })
    assert.equal(typeof sent.id, 'string')
    assert.ok(sent.id.length > 0)
    assert.ok(sent.timestamp >= before - 5_000 && sent.timestamp <= Date.now() + 5_000, 'timestamp is milliseconds since the epoch')
    const record = (await h.sent(DEVICE)).find(r => r.id === sent.id)
    assert.deepEqual(record, { id: sent.id, to: FRIEND, kind: 'text', text: 'hello' })
  })

  it('send accepts a network user id as the recipient', async h => {
    await linkDevice(h)
    const sent = await h.transport.send(DEVICE, `${FRIEND}@s.whatsapp.net`, { kind: 'text', text: 'hi' })
    assert.equal((await h.sent(DEVICE)).find(r => r.id === sent.id)?.to, FRIEND)
  })

  it('disconnect closes the session without unlinking, and connect resumes it as the same phone', async h => {
    await linkDevice(h)
    let mark = h.events.length
    await h.transport.disconnect(DEVICE)
    const closed = await h.transport.status(DEVICE)
    assert.equal(closed.connected, false)
    assert.notEqual(closed.state, 'open')
    await waitFor(h, mark, e => e.type === 'status' && e.deviceId === DEVICE && !e.status.connected, 'a closed status')
    await rejectsWith(h.transport.send(DEVICE, FRIEND, { kind: 'text', text: 'hi' }), 'not-connected')
    mark = h.events.length
    await h.transport.connect(DEVICE)
    await waitForStatus(h, mark, DEVICE, 'open')
    assertOpen(await h.transport.status(DEVICE), PHONE)
  })

  it('a linked session resumes after a restart without a new link', async h => {
    await linkDevice(h)
    await h.restart()
    const mark = h.events.length
    await h.transport.connect(DEVICE)
    await waitForStatus(h, mark, DEVICE, 'open')
    assertOpen(await h.transport.status(DEVICE), PHONE)
    const sent = await h.transport.send(DEVICE, FRIEND, { kind: 'text', text: 'back again' })
    assert.ok(sent.id)
  })

  it('logout deletes the session: neither connect nor a restart resumes it', async h => {
    await linkDevice(h)
    await h.transport.logout(DEVICE)
    assert.equal((await h.transport.status(DEVICE)).connected, false)
    await h.transport.connect(DEVICE)
    await settle()
    assert.equal((await h.transport.status(DEVICE)).connected, false)
    await h.restart()
    const mark = h.events.length
    await h.transport.connect(DEVICE)
    await settle()
    assert.equal((await h.transport.status(DEVICE)).connected, false)
    assert.ok(!h.events.slice(mark).some(e => e.type === 'status' && e.status.state === 'open'), 'no open status after logout')
    await rejectsWith(h.transport.send(DEVICE, FRIEND, { kind: 'text', text: 'hi' }), 'not-connected')
  })

  it('logout, disconnect and connect of a device never linked do not throw', async h => {
    await h.transport.connect('never-linked')
    await h.transport.disconnect('never-linked')
    await h.transport.logout('never-linked')
    assert.equal((await h.transport.status('never-linked')).connected, false)
  })

  it('connect on an open device keeps it open', async h => {
    await linkDevice(h)
    await h.transport.connect(DEVICE)
    assertOpen(await h.transport.status(DEVICE), PHONE)
  })

  it('an incoming text produces a message event in the port shape', async h => {
    await linkDevice(h)
    const mark = h.events.length
    const before = Date.now()
    const id = await h.deliver(DEVICE, { from: FRIEND, content: { kind: 'text', text: 'hi there' } })
    const { message, deviceId } = await waitForMessage(h, mark, id)
    assert.equal(deviceId, DEVICE)
    assert.equal(message.chat, FRIEND)
    assert.equal(message.from, FRIEND)
    assert.equal(message.to, PHONE)
    assert.equal(message.fromMe, false)
    assert.equal(message.isGroup, false)
    assert.equal(message.group, undefined)
    assert.ok(message.timestamp >= before - 5_000 && message.timestamp <= Date.now() + 5_000)
    assert.deepEqual(message.content, { kind: 'text', text: 'hi there' })
  })

  it('groupCreate makes the device admin, and groupInfo by id answers the same group', async h => {
    await linkDevice(h)
    const group = await h.transport.groupCreate(DEVICE, 'Team', [FRIEND, OTHER])
    assert.match(group.id, /^\d+(-\d+)?@g\.us$/)
    assert.equal(group.subject, 'Team')
    const byPhone = new Map(group.participants.map(p => [p.phone ?? p.id.split('@')[0], p.admin]))
    assert.deepEqual([...byPhone].sort(), [[FRIEND, false], [OTHER, false], [PHONE, true]].sort())
    const info = await h.transport.groupInfo(DEVICE, { id: group.id })
    assert.equal(info?.id, group.id)
    assert.equal(info?.subject, 'Team')
    assert.equal(info?.participants.length, 3)
  })

  it('groupInfo of an unknown group is undefined', async h => {
    await linkDevice(h)
    assert.equal(await h.transport.groupInfo(DEVICE, { id: '120363000000000000@g.us' }), undefined)
  })

  it('groupJoin of an invalid invite is undefined', async h => {
    await linkDevice(h)
    assert.equal(await h.transport.groupJoin(DEVICE, 'NoSuchInviteCode123'), undefined)
  })

  it('send to a group the device created reaches the network addressed to the group', async h => {
    await linkDevice(h)
    const group = await h.transport.groupCreate(DEVICE, 'Team', [FRIEND])
    const sent = await h.transport.send(DEVICE, group.id, { kind: 'text', text: 'hello team' })
    assert.deepEqual((await h.sent(DEVICE)).find(r => r.id === sent.id), { id: sent.id, to: group.id, kind: 'text', text: 'hello team' })
  })

  it('an incoming group message names the group as chat and the sender as from', async h => {
    await linkDevice(h)
    const group = await h.transport.groupCreate(DEVICE, 'Team', [FRIEND])
    const mark = h.events.length
    const id = await h.deliver(DEVICE, { from: FRIEND, group: group.id, content: { kind: 'text', text: 'hi all' } })
    const { message } = await waitForMessage(h, mark, id)
    assert.equal(message.isGroup, true)
    assert.equal(message.group, group.id)
    assert.equal(message.chat, group.id)
    assert.equal(message.from, FRIEND)
    assert.equal(message.fromMe, false)
  })

  it('a reaction (and its removal) to a message the device sent resolves with an id', async h => {
    await linkDevice(h)
    const sent = await h.transport.send(DEVICE, FRIEND, { kind: 'text', text: 'react to me' })
    const target = { chat: FRIEND, id: sent.id, fromMe: true }
    assert.ok((await h.transport.send(DEVICE, FRIEND, { kind: 'reaction', target, emoji: '👍' })).id)
    assert.ok((await h.transport.send(DEVICE, FRIEND, { kind: 'reaction', target, emoji: '' })).id)
  })

  it('delete of a message the device sent resolves', async h => {
    await linkDevice(h)
    const sent = await h.transport.send(DEVICE, FRIEND, { kind: 'text', text: 'oops' })
    await h.transport.send(DEVICE, FRIEND, { kind: 'delete', target: { chat: FRIEND, id: sent.id, fromMe: true } })
  })

  it('markRead of a received message resolves', async h => {
    await linkDevice(h)
    const mark = h.events.length
    const id = await h.deliver(DEVICE, { from: FRIEND, content: { kind: 'text', text: 'read me' } })
    await waitForMessage(h, mark, id)
    await h.transport.markRead(DEVICE, { chat: FRIEND, id })
  })

  it('markRead of an unknown message throws not-found', async h => {
    await linkDevice(h)
    await rejectsWith(h.transport.markRead(DEVICE, { chat: FRIEND, id: '3EB0000000000000DEAD' }), 'not-found')
  }, 'validatesTargets')

  it('a reaction to an unknown message throws not-found', async h => {
    await linkDevice(h)
    const target = { chat: FRIEND, id: '3EB0000000000000DEAD' }
    await rejectsWith(h.transport.send(DEVICE, FRIEND, { kind: 'reaction', target, emoji: '👍' }), 'not-found')
  }, 'validatesTargets')

  it('delete of a message the device did not send is refused', async h => {
    await linkDevice(h)
    const mark = h.events.length
    const id = await h.deliver(DEVICE, { from: FRIEND, content: { kind: 'text', text: 'mine' } })
    await waitForMessage(h, mark, id)
    const attempt = h.transport.send(DEVICE, FRIEND, { kind: 'delete', target: { chat: FRIEND, id } })
    await assert.rejects(attempt, (err: unknown) => err instanceof TransportError && (err.code === 'not-found' || err.code === 'invalid'))
    await rejectsWith(h.transport.send(DEVICE, FRIEND, { kind: 'delete', target: { chat: FRIEND, id: '3EB0000000000000DEAD' } }), 'not-found')
  }, 'validatesTargets')
}

// --- Internal helpers ---

/** Link DEVICE as PHONE by QR and wait until it is open. */
async function linkDevice(h: TransportHarness): Promise<void> {
  const challenge = await h.transport.link(DEVICE, {})
  const mark = h.events.length
  await h.completeLink(DEVICE, challenge, PHONE)
  await waitForStatus(h, mark, DEVICE, 'open')
}

function assertOpen(status: SessionStatus, phone: string): void {
  assert.equal(status.state, 'open')
  assert.equal(status.connected, true)
  assert.equal(status.phone, phone)
}

async function rejectsWith(promise: Promise<unknown>, code: TransportError['code']): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof TransportError, `expected a TransportError, got ${String(err)}`)
    assert.equal(err.code, code)
    return true
  })
}

async function waitFor<T extends TransportEvent>(
  h: TransportHarness,
  since: number,
  match: (event: TransportEvent) => boolean,
  what: string,
  timeoutMs = 2_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = h.events.slice(since).find(match)
    if (found) return found as T
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; events: ${JSON.stringify(h.events.slice(since))}`)
    await new Promise(resolve => setTimeout(resolve, 5))
  }
}

async function waitForStatus(h: TransportHarness, since: number, deviceId: string, state: SessionStatus['state']): Promise<SessionStatus> {
  const match = (e: TransportEvent) => e.type === 'status' && e.deviceId === deviceId && e.status.state === state
  const event = await waitFor<Extract<TransportEvent, { type: 'status' }>>(h, since, match, `status ${state} of ${deviceId}`)
  return event.status
}

function waitForMessage(h: TransportHarness, since: number, id: string): Promise<Extract<TransportEvent, { type: 'message' }>> {
  return waitFor(h, since, e => e.type === 'message' && e.message.id === id, `message ${id}`)
}

/** Let asynchronous reconnection attempts (if any) happen before asserting that nothing opened. */
function settle(): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, 20))
}
