import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createInterface, type Interface } from 'node:readline'
import { suite } from 'uvu'
import { storageFromUrl } from '../../../adapters/storage-keyv/index.ts'
import type { Device } from '../../../src/domain/devices.ts'
import { createOtps } from '../../../src/domain/messaging/otp.ts'
import type { ScheduleItem } from '../../../src/domain/messaging/schedule-store.ts'
import type { Storage } from '../../../src/ports/storage.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { needing, POSTGRES, REDIS } from '../../helpers/requires.ts'
import { NODE_TS } from '../../helpers/node-ts.ts'

/**
 * One-time codes and the schedule quota with separate node processes on one Redis or PostgreSQL
 * (test/helpers/otp-quota-contender.ts, each with its own connection and locks): a code is verified
 * once however many processes present it at once, every wrong try counts (none lost to another
 * process's write), a code is void after `otpMaxTries` tries whichever processes made them, and an
 * account's `scheduleQuota.maxPending` holds exactly against adds from every process at once; codes
 * issued by two processes whose sends both fail leave the code from before them valid.
 */
const test = suite('one-time codes and the schedule quota across processes')

const PROCESSES = 3
const CONTENDERS = 20
const TOTAL = PROCESSES * CONTENDERS
const device = { id: 'dev-1', accountId: 'acc-1' } as Device
const to = '5511900000001'
const wrong = (code: string, i: number) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0')

for (const service of [REDIS, POSTGRES]) {
  const onStore = needing(test, service, `one-time codes and the schedule quota across processes on ${service.name}`)

  onStore(`${PROCESSES} node processes x ${CONTENDERS} on ${service.name}: a code verified once, every wrong try counted, the quota exact`, async () => {
    const namespace = `zapgate-test-otpq-${randomBytes(4).toString('hex')}`
    const storage = await storageFromUrl(service.value!, { namespace })
    const children = Array.from({ length: PROCESSES }, (_, id) => startContender(id, service.value!, namespace))
    try {
      await Promise.all(children.map(child => child.ready))
      const race = async <T>(command: object): Promise<T[]> => Promise.all(children.map(child => child.ask<T>(command)))
      const issue = (maxTries: number) => createOtps(storage, new KeyedLock(), { ttlMs: 60_000, maxTries, secret: 'test-secret' }).issue(device, to)
      const verifyHere = (code: string, maxTries: number) =>
        createOtps(storage, new KeyedLock(), { ttlMs: 60_000, maxTries, secret: 'test-secret' }).verify(device, to, code)

      // The right code from every contender at once: valid exactly once.
      let { code } = await issue(5)
      const right = (await race<{ valid: boolean[] }>({ race: 'verify', codes: Array(TOTAL).fill(code), maxTries: 5 })).flatMap(r => r.valid)
      assert.equal(right.filter(Boolean).length, 1, 'one verification of the code is valid, the others are not')
      assert.equal(await storage.get(`otp:${device.id}:${to}`), undefined, 'the code is used up')

      // Wrong codes from every contender at once, under a ceiling above them: each one counted, and the code still works.
      ;({ code } = await issue(TOTAL + 10))
      const codes = Array.from({ length: TOTAL }, (_, i) => wrong(code, i))
      const tried = (await race<{ valid: boolean[] }>({ race: 'verify', codes, maxTries: TOTAL + 10 })).flatMap(r => r.valid)
      assert.equal(tried.filter(Boolean).length, 0)
      assert.equal((await storage.get<{ tries: number }>(`otp:${device.id}:${to}`))?.tries, TOTAL, 'no wrong try lost to another process')
      assert.equal(await verifyHere(code, TOTAL + 10), true)

      // More wrong codes at once than otpMaxTries allows: the code is void, the right one fails after them.
      ;({ code } = await issue(5))
      await race({ race: 'verify', codes: Array.from({ length: TOTAL }, (_, i) => wrong(code, i)), maxTries: 5 })
      assert.equal(await storage.get(`otp:${device.id}:${to}`), undefined, 'void after otpMaxTries tries')
      assert.equal(await verifyHere(code, 5), false)

      // Adds from every contender at once against a quota of 10: exactly 10 stored and counted.
      const outcomes = (await race<{ outcomes: string[] }>({ race: 'schedule', maxPending: 10 })).flatMap(r => r.outcomes)
      assert.deepEqual(
        outcomes.filter(o => o !== 'stored' && o !== 'refused'),
        [],
      )
      assert.equal(outcomes.filter(o => o === 'stored').length, 10, 'exactly the quota stored')
      const items: ScheduleItem[] = []
      for await (const [, item] of storage.list<ScheduleItem>('schedule:dev-1:')) items.push(item)
      assert.equal(items.length, 10)
      assert.ok(items.every(item => item.state === 'pending' && item.quota === undefined))
      assert.equal((await storage.get<{ count: number }>('schedule-quota:acc-1'))?.count, 10)
    } finally {
      for (const child of children) child.end()
      await clean(storage)
    }
  })

  onStore(`codes issued by two node processes whose sends both fail, the first first, on ${service.name}: the code from before is back`, async () => {
    const namespace = `zapgate-test-otpw-${randomBytes(4).toString('hex')}`
    const storage = await storageFromUrl(service.value!, { namespace })
    const [a, b] = [startContender(0, service.value!, namespace), startContender(1, service.value!, namespace)]
    try {
      await Promise.all([a.ready, b.ready])
      const otps = createOtps(storage, new KeyedLock(), { ttlMs: 60_000, maxTries: 5, secret: 'test-secret' })
      const { code: c0 } = await otps.issue(device, to) // delivered
      const { code: c1 } = await a.ask<{ code: string }>({ race: 'issue' }) // A: c1 replaces c0, its send under way
      const { code: c2 } = await b.ask<{ code: string }>({ race: 'issue' }) // B: c2 replaces c1, its send under way
      await a.ask({ race: 'withdraw' }) // A's send failed
      await b.ask({ race: 'withdraw' }) // then B's
      if (c1 !== c0) assert.equal(await otps.verify(device, to, c1), false, 'c1, never delivered, is not valid')
      if (c2 !== c0) assert.equal(await otps.verify(device, to, c2), false, 'c2, never delivered, is not valid')
      assert.equal(await otps.verify(device, to, c0), true, 'c0, the code the recipient holds, is valid again')
    } finally {
      a.end()
      b.end()
      await clean(storage)
    }
  })
}

test.run()

// --- Internal helpers ---

async function clean(storage: Storage): Promise<void> {
  for await (const [key] of storage.list('')) await storage.delete(key)
  await storage.close!()
}

function startContender(id: number, url: string, namespace: string) {
  const child: ChildProcess = spawn(process.execPath, [...NODE_TS, 'test/helpers/otp-quota-contender.ts'], {
    env: { ...process.env, CONTENDER_ID: String(id), CONTENDERS: String(CONTENDERS), STORE_URL: url, STORE_NAMESPACE: namespace },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', chunk => (stderr += chunk))
  const lines: Interface = createInterface({ input: child.stdout! })
  const exited = new Promise<never>((_, reject) =>
    child.on('exit', code => reject(new Error(`contender ${id} exited (${code}): ${stderr.trim() || 'no output'}`))),
  )
  exited.catch(() => {})
  const next = () => Promise.race([new Promise<string>(resolve => lines.once('line', resolve)), exited])
  const ready = next().then(() => undefined)
  return {
    ready,
    ask: async <T>(command: object): Promise<T> => {
      const answer = next()
      child.stdin!.write(`${JSON.stringify(command)}\n`)
      return JSON.parse(await answer) as T
    },
    end: () => (child.exitCode === null ? void child.kill() : undefined),
  }
}
