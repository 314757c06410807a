import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createOtps } from '../../../src/domain/messaging/otp.ts'
import type { Device } from '../../../src/domain/devices.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'

/** A code issued while the one it replaces is being used or tried (another process), or while another new code is being sent: a failed send must not bring the old one back as it was, nor bring back a code never delivered. */
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

/** c0 delivered, then A issues c1 and B c2; each send then fails (its code withdrawn) or not, in the order given. */
async function twoSends(outcomes: [send: 'A' | 'B', failed: boolean][], maxTries = 5) {
  const otps = createOtps(memoryStorage(), new KeyedLock(), { ttlMs: 60_000, maxTries, secret: 'segredo' })
  const c0 = await otps.issue(device, to)
  const sends = { A: await otps.issue(device, to), B: await otps.issue(device, to) }
  for (const [send, failed] of outcomes) if (failed) await sends[send].withdraw()
  return { otps, codes: [c0.code, sends.A.code, sends.B.code] }
}

/** Which of c0, c1, c2 verify, each checked on a fresh run (a right code is used up, a wrong one tried). */
async function valid(outcomes: [send: 'A' | 'B', failed: boolean][]): Promise<string[]> {
  const names = ['c0', 'c1', 'c2']
  const found: string[] = []
  for (let i = 0; i < 3; i++) {
    const { otps, codes } = await twoSends(outcomes)
    if (codes.indexOf(codes[i]!) === i && (await otps.verify(device, to, codes[i]!))) found.push(names[i]!)
  }
  return found
}

test('two sends after a delivered code c0: whichever order their failures come in, the newest code not withdrawn is the valid one', async () => {
  assert.equal(
    await valid([
      ['A', true],
      ['B', true],
    ]),
    ['c0'],
    'A fails, then B: c0 (before, c1, never delivered)',
  )
  assert.equal(
    await valid([
      ['B', true],
      ['A', true],
    ]),
    ['c0'],
    'B fails, then A: c0',
  )
  assert.equal(
    await valid([
      ['A', false],
      ['B', true],
    ]),
    ['c1'],
    'A delivered, B fails: c1',
  )
  assert.equal(
    await valid([
      ['A', true],
      ['B', false],
    ]),
    ['c2'],
    'A fails, B delivered: c2',
  )
})

test('a code that comes back keeps its wrong tries', async () => {
  const otps = createOtps(memoryStorage(), new KeyedLock(), { ttlMs: 60_000, maxTries: 2, secret: 'segredo' })
  const c0 = await otps.issue(device, to)
  const wrong = (code: string) => (code === '000000' ? '111111' : '000000')
  assert.is(await otps.verify(device, to, wrong(c0.code)), false)
  const [a, b] = [await otps.issue(device, to), await otps.issue(device, to)]
  await a.withdraw()
  await b.withdraw()
  assert.is(await otps.verify(device, to, wrong(c0.code)), false)
  assert.is(await otps.verify(device, to, c0.code), false, 'two wrong tries used c0 up (maxTries 2)')
})

test.run()
