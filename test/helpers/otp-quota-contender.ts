/**
 * One contender process for test/domain/messaging/otp-quota-processes.test.ts: opens the store given
 * in STORE_URL (namespace STORE_NAMESPACE), prints `ready`, then for each JSON command read on stdin
 * runs CONTENDERS of it at once (`issue` and `withdraw`: one) and prints one JSON line of the outcomes (`exit` ends it). Not a test by itself.
 */
import { createInterface } from 'node:readline'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import type { Device } from '../../src/domain/devices.ts'
import { encodeAction } from '../../src/domain/messaging/actions.ts'
import { createOtps } from '../../src/domain/messaging/otp.ts'
import { createScheduleStore } from '../../src/domain/messaging/schedule-store.ts'
import { isGatewayError } from '../../src/errors.ts'
import { requireAtomic } from '../../src/ports/storage.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'

type Command =
  | { race: 'verify'; codes: string[]; maxTries: number }
  | { race: 'schedule'; maxPending: number }
  | { race: 'issue' } // one code issued (not CONTENDERS): its send under way, the code printed
  | { race: 'withdraw' } // the code this process issued last withdrawn (its send failed)
  | { race: 'exit' }

const id = Number(process.env.CONTENDER_ID)
const n = Number(process.env.CONTENDERS)
const storage = requireAtomic(await storageFromUrl(process.env.STORE_URL!, { namespace: process.env.STORE_NAMESPACE }), 'contender')
const device = { id: 'dev-1', accountId: 'acc-1' } as Device
const each = <T>(run: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => run(i)))
let issued: { code: string; withdraw(): Promise<void> } | undefined
const action = encodeAction({ kind: 'send', to: '5511988880002', message: { kind: 'text', text: 'oi' } })

await storage.get('warm-up')
console.log('ready')
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as Command
  if (command.race === 'exit') break
  const lock = new KeyedLock() // each contender a process of its own as far as locks go: only the store's atomic steps order them
  if (command.race === 'issue') {
    issued = await createOtps(storage, lock, { ttlMs: 60_000, maxTries: 5, secret: 'test-secret' }).issue(device, '5511900000001')
    console.log(JSON.stringify({ code: issued.code }))
  } else if (command.race === 'withdraw') {
    await issued!.withdraw()
    console.log('{}')
  } else if (command.race === 'verify') {
    const otps = createOtps(storage, lock, { ttlMs: 60_000, maxTries: command.maxTries, secret: 'test-secret' })
    // Contender i of this process tries codes[i] (the list is one per contender of every process).
    const valid = await each(i => otps.verify(device, '5511900000001', command.codes[id * n + i]!))
    console.log(JSON.stringify({ valid }))
  } else {
    const store = createScheduleStore(storage, lock, { maxPending: command.maxPending, maxBytes: Infinity })
    const input = {
      accountId: 'acc-1',
      deviceId: 'dev-1',
      to: '5511988880002',
      summary: 'oi',
      dueAt: Date.now() + 3_600_000,
      agendamento: '2030-01-01 00:00:00',
    }
    const outcomes = await each(() =>
      store.add(input, action, `contender-${id}`).then(
        () => 'stored',
        err => (isGatewayError(err, 'quota-exceeded') ? 'refused' : `failed: ${err}`),
      ),
    )
    console.log(JSON.stringify({ outcomes }))
  }
}
await storage.close!()
