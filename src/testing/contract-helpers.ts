import assert from 'node:assert/strict'
import { TransportError } from '../ports/transport.ts'
import type { SessionStatus, TransportEvent } from '../ports/transport.ts'
import type { TransportHarness } from './contract-types.ts'

/** The phones and device of the contract's cases. */
export const DEVICE = 'device-1'
export const PHONE = '5511999990001'
export const FRIEND = '5511988880002'
export const OTHER = '5511977770003'

// --- Internal helpers ---

/** Link DEVICE as PHONE by QR and wait until it is open. */
export async function linkDevice(h: TransportHarness): Promise<void> {
  const challenge = await h.transport.link(DEVICE, {})
  const mark = h.events.length
  await h.completeLink(DEVICE, challenge, PHONE)
  await waitForStatus(h, mark, DEVICE, 'open')
}

export function assertOpen(status: SessionStatus, phone: string): void {
  assert.equal(status.state, 'open')
  assert.equal(status.connected, true)
  assert.equal(status.phone, phone)
}

export async function rejectsWith(promise: Promise<unknown>, code: TransportError['code']): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof TransportError, `expected a TransportError, got ${String(err)}`)
    assert.equal(err.code, code)
    return true
  })
}

export async function waitFor<T extends TransportEvent>(
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

export async function waitForStatus(h: TransportHarness, since: number, deviceId: string, state: SessionStatus['state']): Promise<SessionStatus> {
  const match = (e: TransportEvent) => e.type === 'status' && e.deviceId === deviceId && e.status.state === state
  const event = await waitFor<Extract<TransportEvent, { type: 'status' }>>(h, since, match, `status ${state} of ${deviceId}`)
  return event.status
}

export function waitForMessage(h: TransportHarness, since: number, id: string): Promise<Extract<TransportEvent, { type: 'message' }>> {
  return waitFor(h, since, e => e.type === 'message' && e.message.id === id, `message ${id}`)
}

/** After a transition has settled, the device's latest status event says what `status` answers (its state, and whether connected). */
export async function assertLatestStatusAgrees(h: TransportHarness, deviceId: string, after: string): Promise<void> {
  await settle()
  const statuses = h.events.flatMap(e => (e.type === 'status' && e.deviceId === deviceId ? [e.status] : []))
  const latest = statuses.at(-1)
  const now = await h.transport.status(deviceId)
  assert.deepEqual(
    latest && { state: latest.state, connected: latest.connected },
    { state: now.state, connected: now.connected },
    `after ${after}, the latest status event disagrees with status(); status events: ${JSON.stringify(statuses.map(s => s.state))}`,
  )
}

/** Let asynchronous reconnection attempts (if any) happen before asserting that nothing opened. */
export function settle(): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, 20))
}
