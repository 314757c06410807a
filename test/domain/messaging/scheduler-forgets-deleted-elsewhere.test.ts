import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { suite } from 'uvu'
import { storageFromUrl } from '../../../adapters/storage-keyv/index.ts'
import type { Device, Devices } from '../../../src/domain/devices.ts'
import type { Action } from '../../../src/domain/messaging/actions.ts'
import type { Messenger } from '../../../src/domain/messaging/messenger.ts'
import { createScheduleStore } from '../../../src/domain/messaging/schedule-store.ts'
import { createScheduler } from '../../../src/domain/messaging/scheduler.ts'
import { silentLogger } from '../../../src/logger.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { needing } from '../../helpers/requires.ts'
import { processStores } from '../../helpers/shared-backends.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'
import { NODE_TS } from '../../helpers/node-ts.ts'

/**
 * A process's scheduler waits for devices held by other processes (not connected here) and remembers
 * the wait, and the last connection of devices once held here. A device deleted by ANOTHER process
 * (its deletion hooks run there, not here) must not stay in this process's memory for ever: the
 * deletion happens in a separate node process (test/helpers/schedule-remover.ts).
 */
const test = suite('scheduler: nothing kept of devices deleted by another process')

const accounts = { get: async () => ({}), active: () => true } as never
const DEVICES = 5

for (const [name, storeUrl, service] of processStores('zapgate-schedule-removal-')) {
  needing(
    test,
    service,
    `a shared store on ${name}`,
  )(`${name}: devices deleted by another process leave nothing in this one's scheduler`, async () => {
    const namespace = `zapgate-test-${randomBytes(4).toString('hex')}`
    const storage = await storageFromUrl(storeUrl!, { namespace })
    const ids = Array.from({ length: DEVICES }, (_, i) => `dev-${i}`)
    for (const id of ids) await storage.set(`device:${id}`, { id, accountId: 'a1', linked: true })
    const devices = {
      get: (id: string) => storage.get<Device>(`device:${id}`),
      load: (id: string) => storage.get<Device>(`device:${id}`),
      status: async () => ({ connected: false, state: 'closed' }), // held by another process
    } as unknown as Devices
    const scheduler = createScheduler(
      createScheduleStore(storage, new KeyedLock()),
      { perform: async () => 'never' } as unknown as Messenger,
      { devices, accounts, liveness: soloLiveness('here') },
      { retryMs: [50], leaseMs: 2_000, pollMs: 100, maxWaitMs: 3_600_000 },
      silentLogger,
    )
    try {
      scheduler.start()
      const action = { kind: 'send', to: '5511988880002', message: { kind: 'text', text: 'oi' } } as Action
      for (const id of ids) await scheduler.schedule((await devices.get(id))!, action, { at: Date.now(), text: 'agora' })
      await waitFor(() => scheduler.devicesRemembered === DEVICES, 20_000, 'every item waiting for its device')
      for (const id of ids) await removeElsewhere(storeUrl!, namespace, id)
      assert.equal(await storage.get(`device:${ids[0]}`), undefined, 'the other process deleted the devices')
      await waitFor(() => scheduler.devicesRemembered === 0, 20_000, 'the scheduler to forget the devices deleted elsewhere').catch(() => undefined)
      assert.equal(scheduler.devicesRemembered, 0, 'a device deleted by another process leaves nothing in this one')
    } finally {
      await scheduler.close()
      for await (const [key] of storage.list('')) await storage.delete(key)
      await storage.close?.()
    }
  })
}

test.run()

// --- Internal helpers ---

/** Delete a device's records in a separate node process; resolves once it exited. */
function removeElsewhere(url: string, namespace: string, deviceId: string): Promise<void> {
  const child = spawn(process.execPath, [...NODE_TS, 'test/helpers/schedule-remover.ts'], {
    env: { ...process.env, STORE_URL: url, STORE_NAMESPACE: namespace, DEVICE_ID: deviceId },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', chunk => (output += chunk))
  child.stderr!.on('data', chunk => (output += chunk))
  return new Promise((resolve, reject) =>
    child.on('exit', code => (code === 0 && JSON.parse(output).removed === 1 ? resolve() : reject(new Error(`remover exited ${code}: ${output.trim()}`)))),
  )
}
