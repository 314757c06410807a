/**
 * Another gateway process deleting a device, for test/domain/messaging/scheduler-forgets-deleted-elsewhere.test.ts:
 * opens the store given in STORE_URL (namespace STORE_NAMESPACE), removes the device record DEVICE_ID and its
 * scheduled items (as the deletion's hooks do in the process that holds it), prints `done` and exits. Not a test by itself.
 */
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { createScheduleStore } from '../../src/domain/messaging/schedule-store.ts'
import { requireAtomic } from '../../src/ports/storage.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'

const storage = requireAtomic(await storageFromUrl(process.env.STORE_URL!, { namespace: process.env.STORE_NAMESPACE }), 'schedule remover')
const deviceId = process.env.DEVICE_ID!
const removed = await createScheduleStore(storage, new KeyedLock()).removeDevice(deviceId, 'remover')
await storage.delete(`device:${deviceId}`)
await storage.close?.()
console.log(JSON.stringify({ removed }))
