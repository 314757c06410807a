import type { IncomingMessage, SessionStatus, TransportEvent } from '../../src/ports/transport.ts'
import type { Storage } from '../../src/ports/storage.ts'
import { silentLogger, type Logger } from '../../src/logger.ts'
import { baileysTransport, type BaileysTransport } from '../../adapters/transport-baileys/index.ts'
import type { BaileysTransportOptions } from '../../adapters/transport-baileys/options.ts'
import { FakeBaileys, settle, waitFor, type FakeBehaviour } from './fake-baileys/index.ts'
import { ME, ME_LID } from './baileys-fixtures.ts'
import { RecordingStorage } from './recording-storage.ts'
import * as assert from 'uvu/assert'

/** A started Baileys transport over a FakeBaileys network, with every event it emitted recorded. */
export interface BaileysSetup {
  fake: FakeBaileys
  storage: Storage
  transport: BaileysTransport
  events: TransportEvent[]
  /** Status events of a device, in order. */
  statuses(deviceId: string): SessionStatus[]
  /** Message events of a device, in order. */
  messages(deviceId: string): IncomingMessage[]
  /** QR refresh events of a device, in order. */
  qrs(deviceId: string): string[]
  /** Link a device by QR and complete the link as `phone`; resolves once the device is open. */
  linked(deviceId: string, phone: string, lid?: string): Promise<void>
}

/** Options of setupBaileys: transport options (fast back-off by default) plus the fake's behaviour and a store. */
export type SetupOptions = BaileysTransportOptions & { behaviour?: FakeBehaviour; storage?: Storage; logger?: Logger }

/** Start a Baileys transport on a fake network (offline). */
export async function setupBaileys(options: SetupOptions = {}): Promise<BaileysSetup> {
  const { behaviour, storage = new RecordingStorage(), logger = silentLogger, ...transportOptions } = options
  const fake = new FakeBaileys(behaviour)
  const events: TransportEvent[] = []
  const transport = baileysTransport({
    ...fake.transportOptions(),
    reconnect: { initialDelayMs: 5, maxDelayMs: 40, jitter: 0, ...transportOptions.reconnect },
    ...transportOptions,
  })
  await transport.start({ storage, logger, emit: async event => void events.push(event) })
  const of = <T extends TransportEvent['type']>(type: T, deviceId: string) =>
    events.filter((e): e is Extract<TransportEvent, { type: T }> => e.type === type && e.deviceId === deviceId)
  return {
    fake,
    storage,
    transport,
    events,
    statuses: deviceId => of('status', deviceId).map(e => e.status),
    messages: deviceId => of('message', deviceId).map(e => e.message),
    qrs: deviceId => of('qr', deviceId).map(e => e.qr),
    async linked(deviceId, phone, lid) {
      await transport.link(deviceId, {})
      await fake.completeLink(deviceId, phone, lid ? { lid } : {})
      await waitFor(() => of('status', deviceId).at(-1)?.status.state === 'open', `${deviceId} open`)
      await settle()
    },
  }
}

/** setupBaileys on a RecordingStorage (a new one unless given), with device 'dev' linked as ME (LID ME_LID) and open. */
export async function linkedBaileys(options: Omit<SetupOptions, 'storage'> & { storage?: RecordingStorage } = {}) {
  const storage = options.storage ?? new RecordingStorage()
  const s = await setupBaileys({ ...options, storage })
  await s.linked('dev', ME, ME_LID)
  return { ...s, storage }
}

/** A RecordingStorage holding device 'dev' linked as ME (with `lid`, when given) by a transport that has stopped since: stored, not running. */
export async function storedDevice(lid?: string): Promise<RecordingStorage> {
  const storage = new RecordingStorage()
  const first = await setupBaileys({ storage })
  await first.linked('dev', ME, lid)
  await first.transport.stop()
  return storage
}

/** Device `deviceId` was unlinked (a socket of it called Baileys' `logout`) and then deleted: none of its keys left, its last status closed, logged out. */
export function assertLoggedOut(s: BaileysSetup, storage: RecordingStorage, deviceId = 'dev'): void {
  assert.ok(
    s.fake.socketsOf(deviceId).some(socket => socket.calls.some(c => c.method === 'logout')),
    'WhatsApp heard of the logout (the phone drops the linked device)',
  )
  assert.equal(storage.keys(`device:${deviceId}:`), [])
  assert.equal(s.statuses(deviceId).at(-1), { state: 'closed', connected: false, reason: 'logged out' })
}
