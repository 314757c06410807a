import { createHmac, randomBytes, randomInt } from 'node:crypto'
import type { Storage } from '../../ports/storage.ts'
import { safeEqual } from '../../security/keys.ts'
import { Collection } from '../../store/collection.ts'
import type { KeyedLock } from '../../store/keyed-lock.ts'
import type { IncomingMessage } from '../../ports/transport.ts'
import type { Device } from '../devices.ts'

/** An issued code: never the code itself, only its keyed hash (HMAC key: `secret`); its salt names it. */
interface OtpCode {
  salt: string
  hash: string
  /** By the issuer's clock: only sets the TTL of a rewrite (capped at `ttlMs`, so another host's clock can stretch a code's life by no more than their skew); the store's TTL ends the code. */
  expiresAt: number
  tries: number
}

/** The record of a recipient: its valid code, and the live codes it replaced, newest first (a failed send puts back the newest one not withdrawn). */
interface StoredOtp extends OtpCode {
  replaced?: OtpCode[]
}

/** How many replaced codes a record keeps: more sends than this failing in a row leave no code rather than an older one. */
const MAX_REPLACED = 5

/** One-time passwords: a 6-digit code per device and recipient, replacing the previous one, stored as HMAC-SHA256(secret, salt + code); it expires after `ttlMs`, allows `maxTries` attempts and works once. */
export function createOtps(storage: Storage, lock: KeyedLock, options: { ttlMs: number; maxTries: number; secret: string }) {
  const codes = new Collection<StoredOtp>(storage, lock, 'otp')
  // The texts that carried codes, by keyed hash of sender phone and text: the phone's other linked devices see each as their own (fromMe).
  // Not by recipient: they may name its chat otherwise than the send did (by the phone for a code sent to the LID, or the reverse), and the text holds a fresh code.
  const texts = new Collection<true>(storage, lock, 'otp-text')
  const textId = (phone: string, text: string) =>
    createHmac('sha256', options.secret)
      .update(JSON.stringify([phone, text]))
      .digest('base64url')
  // What is left of a code's life by this host's clock, never more than a whole one (the issuer may be another host).
  const lifeLeft = (record: OtpCode): number => Math.min(options.ttlMs, record.expiresAt - Date.now())
  const usable = (code: OtpCode): boolean => lifeLeft(code) > 0 && code.tries < options.maxTries
  // `valid` as the record, with the usable codes of `older` (newest first) as those it replaced.
  const recordOf = ({ salt, hash, expiresAt, tries }: OtpCode, older: OtpCode[]): StoredOtp => {
    const replaced = older.filter(usable).slice(0, MAX_REPLACED)
    return replaced.length ? { salt, hash, expiresAt, tries, replaced } : { salt, hash, expiresAt, tries }
  }
  // A record's codes, newest (the valid one) first.
  const codesOf = ({ replaced = [], ...valid }: StoredOtp): [OtpCode, ...OtpCode[]] => [valid, ...replaced]
  const hash = (salt: string, code: string): string => createHmac('sha256', options.secret).update(salt).update(':').update(code).digest('base64')
  return {
    /**
     * Issue a new code for `recipient`: the code in clear, once, and `withdraw()` for when its send fails: the code is
     * voided, and when it is the valid one, the newest code before it not withdrawn is valid again (each step one
     * compare-and-set of the record, so sends of several processes failing in any order leave the code from before them).
     */
    async issue(device: Device, recipient: string): Promise<{ code: string; withdraw(): Promise<void> }> {
      const id = `${device.id}:${recipient}`
      const code = otpCodeText(randomInt(0, OTP_CODES))
      const salt = randomBytes(16).toString('base64')
      const issued: OtpCode = { salt, hash: hash(salt, code), expiresAt: Date.now() + options.ttlMs, tries: 0 }
      // Replace what is stored as it was read (compare-and-set), keeping its codes (with their tries) as the replaced ones.
      let stored = await codes.load(id)
      while (!(await codes.replace(id, stored, recordOf(issued, stored ? codesOf(stored) : []), options.ttlMs))) stored = await codes.load(id)
      // Drop the code from the record as read, wherever it is in it (not there: used, void or withdrawn; nothing to do).
      const withdraw = async () => {
        for (;;) {
          const record = await codes.load(id)
          if (!record) return
          const [valid, ...older] = codesOf(record)
          const mine = (c: OtpCode) => c.salt === salt
          if (!mine(valid) && !older.some(mine)) return
          // Replaced since: it leaves the codes kept. The valid one: the newest usable code before it (none withdrawn) is valid again.
          const kept = older.filter(c => usable(c) && !mine(c))
          const next = mine(valid) ? kept[0] && recordOf(kept[0], kept.slice(1)) : recordOf(valid, kept)
          const done = next ? await codes.replace(id, record, next, Math.max(1, lifeLeft(next))) : await codes.removeIfEqual(id, record)
          if (done) return
        }
      }
      return { code, withdraw }
    },
    /** Whether `code` is the valid code of `recipient` (used up; wrong ones count as tries), each step conditional on the record read. */
    async verify(device: Device, recipient: string, code: string): Promise<boolean> {
      const id = `${device.id}:${recipient}`
      const candidate = /^\d{6}$/.test(code) ? code : ''
      for (;;) {
        const record = await codes.load(id)
        if (!record) return false
        if (record.tries >= options.maxTries) {
          await codes.removeIfEqual(id, record)
          return false
        }
        if (safeEqual(hash(record.salt, candidate), record.hash)) {
          if (await codes.removeIfEqual(id, record)) return true
          continue // used or changed meanwhile: read again
        }
        const tries = record.tries + 1
        const counted =
          tries >= options.maxTries
            ? await codes.removeIfEqual(id, record)
            : await codes.replace(id, record, { ...record, tries }, Math.max(1, lifeLeft(record)))
        if (counted) return false
      }
    },
    /** Remember that `device` sends `text` (carrying a code), before it goes out: any device of its phone that sees it, in whichever chat it names, is told by isCodeText. */
    rememberText: (device: Device, text: string): Promise<void> =>
      device.phone ? texts.put(textId(device.phone, text), true, options.ttlMs) : Promise.resolve(),
    /** Whether a text `device` sees as its own (sent from its phone or another of its linked devices) is one that carried a code (it never reaches a webhook). */
    async isCodeText(device: Device, message: IncomingMessage): Promise<boolean> {
      if (!message.fromMe || message.content.kind !== 'text' || !device.phone) return false
      return (await texts.get(textId(device.phone, message.content.text))) === true
    },
    /** Drop the codes of a deleted device. */
    removeDevice: (device: Device): Promise<number> => codes.removeWithPrefix(`${device.id}:`),
  }
}

/** How many codes there are: 6 digits, 000000 to 999999. */
export const OTP_CODES = 1_000_000

/** Code number `n` (0 to OTP_CODES - 1) as its 6 digits, zeros in front. */
export function otpCodeText(n: number): string {
  return String(n).padStart(6, '0')
}
