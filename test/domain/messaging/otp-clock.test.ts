import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createOtps } from '../../../src/domain/messaging/otp.ts'
import type { Device } from '../../../src/domain/devices.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { RecordingStorage } from '../../helpers/recording-storage.ts'

/** An OTP's stored `expiresAt` is the issuing host's clock: another host rewriting it (a wrong try) keeps no more than a whole code's life. */
const test = suite('one-time codes across hosts whose clocks differ')

test("a wrong try on a code issued by a host an hour ahead rewrites it with at most the code's life, not an hour more", async () => {
  const storage = new RecordingStorage()
  const otps = createOtps(storage, new KeyedLock(), { ttlMs: 60_000, maxTries: 5, secret: 'segredo' })
  const device = { id: 'dev-1' } as Device
  const { code } = await otps.issue(device, '5511900000001')
  const [key, entry] = [...storage.entries].find(([k]) => k.includes('dev-1:5511900000001'))!
  const stored = JSON.parse(entry.json)
  storage.entries.set(key, { ...entry, json: JSON.stringify({ ...stored, expiresAt: stored.expiresAt + 3_600_000 }) })
  const wrong = code === '000000' ? '111111' : '000000'
  assert.is(await otps.verify(device, '5511900000001', wrong), false)
  const rewrite = storage.writes.at(-1)!
  assert.is(rewrite.key, key)
  assert.ok(rewrite.ttlMs! <= 60_000, `rewritten with ${rewrite.ttlMs} ms to live`)
  assert.is(await otps.verify(device, '5511900000001', code), true, 'the right code still works once')
})

test.run()
