import assert from 'node:assert/strict'
import type { ContractCase } from './contract-types.ts'
import { DEVICE, FRIEND, PHONE, assertLatestStatusAgrees, assertOpen, linkDevice, rejectsWith, settle, waitFor, waitForStatus } from './contract-helpers.ts'

/** The Transport contract, sessions: linking by QR or code, status, disconnect, resume, logout. */
export function sessionCases(it: ContractCase): void {
  it('status of a device never linked is closed and not connected', async h => {
    const status = await h.transport.status('never-seen')
    assert.equal(status.state, 'closed')
    assert.equal(status.connected, false)
    assert.notEqual(h.transport.statusNow?.('never-seen')?.connected, true, 'statusNow never calls a device never linked connected')
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
    if (h.transport.statusNow) assert.deepEqual(h.transport.statusNow(DEVICE), await h.transport.status(DEVICE), 'statusNow says what status says')
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

  it('disconnect closes the session without unlinking, and connect resumes it as the same phone', async h => {
    await linkDevice(h)
    let mark = h.events.length
    await h.transport.disconnect(DEVICE)
    const closed = await h.transport.status(DEVICE)
    assert.equal(closed.connected, false)
    assert.notEqual(closed.state, 'open')
    assert.notEqual(h.transport.statusNow?.(DEVICE)?.connected, true, 'statusNow of a closed session is not connected')
    await waitFor(h, mark, e => e.type === 'status' && e.deviceId === DEVICE && !e.status.connected, 'a closed status')
    await rejectsWith(h.transport.send(DEVICE, FRIEND, { kind: 'text', text: 'hi' }), 'not-connected')
    mark = h.events.length
    await h.transport.connect(DEVICE)
    await waitForStatus(h, mark, DEVICE, 'open')
    assertOpen(await h.transport.status(DEVICE), PHONE)
  })

  it('status events arrive in order: after each transition the latest status event says what status answers', async h => {
    await linkDevice(h)
    await assertLatestStatusAgrees(h, DEVICE, 'the link opened')
    let mark = h.events.length
    await h.transport.disconnect(DEVICE)
    await waitFor(h, mark, e => e.type === 'status' && e.deviceId === DEVICE && !e.status.connected, 'a closed status')
    await assertLatestStatusAgrees(h, DEVICE, 'disconnect')
    mark = h.events.length
    await h.transport.connect(DEVICE)
    await waitForStatus(h, mark, DEVICE, 'open')
    await assertLatestStatusAgrees(h, DEVICE, 'connect')
    await h.restart()
    mark = h.events.length
    await h.transport.connect(DEVICE)
    await waitForStatus(h, mark, DEVICE, 'open')
    await assertLatestStatusAgrees(h, DEVICE, 'connect after a restart')
    await h.transport.logout(DEVICE)
    await assertLatestStatusAgrees(h, DEVICE, 'logout')
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
}
