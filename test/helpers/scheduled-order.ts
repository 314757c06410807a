import type { Device, Devices } from '../../src/domain/devices.ts'
import type { Action } from '../../src/domain/messaging/actions.ts'
import type { Messenger } from '../../src/domain/messaging/messenger.ts'
import { createScheduleStore } from '../../src/domain/messaging/schedule-store.ts'
import { createScheduler } from '../../src/domain/messaging/scheduler.ts'
import { silentLogger } from '../../src/logger.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { waitFor } from './gateway.ts'
import { memoryStorage } from './memory-storage.ts'
import { soloLiveness } from './solo-liveness.ts'

/** The device of the scheduler order tests. */
export const orderDevice = { id: 'd1', accountId: 'a1', linked: true } as Device

/** The texts scheduled, in the order they are scheduled. */
export const ORDER = ['um', 'dois', 'tres', 'quatro']

/** What a scheduler of the order tests is made of; the store defaults to one in memory. */
interface OrderParts {
  devices: Devices
  accounts: unknown
  messenger: Messenger
  store?: ReturnType<typeof createScheduleStore>
}

/** A messenger that records each text it sends in `sent`. */
export function recordingMessenger(sent: string[]): Messenger {
  return {
    async perform(_device: Device, action: Action) {
      sent.push((action as { message: { text: string } }).message.text)
      return `m${sent.length}`
    },
  } as unknown as Messenger
}

/**
 * Schedule ORDER's texts for orderDevice, due together (each scheduled in a millisecond of its own), start the scheduler
 * `make` builds its parts for (`wake`: the scheduler's wake of the device; `sent`: what recordingMessenger records), and
 * resolve the texts in the order they were sent once all are (10 s at most).
 */
export async function scheduledOrder(
  make: (tools: { wake: () => void; sent: string[]; newStore: () => ReturnType<typeof createScheduleStore> }) => OrderParts,
) {
  const sent: string[] = []
  const newStore = () => createScheduleStore(memoryStorage(), new KeyedLock())
  let scheduler: ReturnType<typeof createScheduler> | undefined
  const { devices, accounts, messenger, store = newStore() } = make({ wake: () => scheduler!.wake(orderDevice.id), sent, newStore })
  scheduler = createScheduler(
    store,
    messenger,
    { devices, accounts: accounts as never, liveness: soloLiveness() },
    { retryMs: [], pollMs: 60_000, leaseMs: 2_000, maxWaitMs: 3_600_000 },
    silentLogger,
  )
  try {
    const at = Date.now() + 300
    for (const text of ORDER) {
      await new Promise(resolve => setTimeout(resolve, 3))
      await scheduler.schedule(orderDevice, { kind: 'send', to: '5511988880002', message: { kind: 'text', text } } as Action, { at, text })
    }
    scheduler.start()
    await waitFor(() => sent.length === ORDER.length, 10_000, 'the items to be sent').catch(err => {
      throw new Error(`${err.message}; sent: [${sent.join(', ')}]`)
    })
    return sent
  } finally {
    await scheduler.close()
  }
}
