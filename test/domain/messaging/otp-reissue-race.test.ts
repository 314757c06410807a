import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createOtps } from '../../../src/domain/messaging/otp.ts'
import type { Device } from '../../../src/domain/devices.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'

/** A code issued while the one it replaces is being used or tried (another process): a failed send must not bring the old one back as it was. */
const test = suite('one-time codes: a new code replacing one that another process uses or tries meanwhile')

const device = { id: 'dev-1' } as Device
const to = '5511900000001'

/** A store whose next read of the code's record runs `meanwhile` right after reading (another process's step between the issuer's read and its write). */
function racingStore() {
  const storage = memoryStorage()
  let meanwhile: (() => Promise<unknown>) | undefined
  const get = storage.get.bind(storage)
  storage.get = async <T>(key: string) => {
    const value = await get<T>(key)
    const step = key.endsWith(`${device.id}:${to}`) ? meanwhile : undefined
    meanwhile = undefined
    await step?.()
    return value
  }
  return { storage, before: (step: () => Promise<unknown>) => (meanwhile = step) }
}

test('a code verified while a new one is issued stays used when the new one is withdrawn (its send failed)', async () => {
  const { storage, before } = racingStore()
  const otps = createOtps(storage, new KeyedLock(), { ttlMs: 60_000, maxTries: 5, secret: 'segredo' })
  const first = await otps.issue(device, to)
  let used: boolean | undefined
  before(async () => (used = await otps.verify(device, to, first.code)))
  const second = await otps.issue(device, to)
  assert.is(used, true, 'the first code was used once')
  await second.withdraw()
  assert.is(await otps.verify(device, to, first.code), false, 'a used code never verifies again')
})

test('wrong tries made while a new code is issued still count when the new one is withdrawn', async () => {
  const { storage, before } = racingStore()
  const otps = createOtps(storage, new KeyedLock(), { ttlMs: 60_000, maxTries: 2, secret: 'segredo' })
  const first = await otps.issue(device, to)
  const wrong = first.code === '000000' ? '111111' : '000000'
  before(() => otps.verify(device, to, wrong))
  const second = await otps.issue(device, to)
  await second.withdraw()
  assert.is(await otps.verify(device, to, wrong), false)
  assert.is(await otps.verify(device, to, first.code), false, 'two wrong tries used the code up (maxTries 2)')
})

test.run()
