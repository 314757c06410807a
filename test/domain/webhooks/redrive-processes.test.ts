import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createInterface } from 'node:readline'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { storageFromUrl } from '../../../adapters/storage-keyv/index.ts'
import { createOutboxStore, outboxKey } from '../../../src/domain/webhooks/outbox-store.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { lateRecord } from '../../helpers/outbox.ts'
import { startReceiver, type Receiver } from '../../helpers/receiver.ts'
import { needing } from '../../helpers/requires.ts'
import { processStores } from '../../helpers/shared-backends.ts'
import { NODE_TS } from '../../helpers/node-ts.ts'

/**
 * Two gateway processes on one store redrive the same dead letter at once (a host's "redrive the dead
 * letters" job running in each process, two operators clicking the same letter): separate node
 * processes (test/helpers/redrive-contender.ts). What the receiver relies on: the event arrives once.
 */
const stores = processStores('zapgate-redrive-')

const test = suite('Outbox: one dead letter redriven by two processes at once, or discarded while redriven')

for (const [name, storeUrl, service] of stores) {
  const url = storeUrl!
  const storeTest = needing(test, service, `redrive processes on ${name}`)

  storeTest(`on ${name}, a redrive that read the letter before the other redrive's event was delivered does not deliver it again`, () =>
    withDeadLetter(url, async ({ store, receiver, env, start }) => {
      // B has read the letter and is about to put the event back; A redrives it meanwhile, and it is delivered.
      const b = start({ ...env, HOLD: '1' })
      assert.is(await b.next(), 'holding')
      assert.equal(JSON.parse(await start(env).next()), { redriven: true })
      assert.is(receiver.hooks.length, 1)
      // B goes on.
      b.process.stdin!.end('go\n')
      const answered = JSON.parse(await b.next())
      assert.is(receiver.hooks.length, 1, `the event was delivered ${receiver.hooks.length} times (B's redrive answered ${JSON.stringify(answered)})`)
      assert.equal(answered, { redriven: false }, 'B found no dead letter left to redrive')
      assert.equal(await store.deadLetters(), [])
      assert.is(await store.count(), 0)
    }),
  )

  storeTest(`on ${name}, a letter discarded while a redrive is putting it back is not delivered`, () =>
    withDeadLetter(url, async ({ store, receiver, env, start }) => {
      const b = start({ ...env, HOLD: '1' })
      assert.is(await b.next(), 'holding')
      assert.ok(await store.discard(env.EVENT_ID), 'the host discarded the letter')
      b.process.stdin!.end('go\n')
      assert.equal(JSON.parse(await b.next()), { redriven: false }, 'the redrive found no dead letter left')
      assert.is(receiver.hooks.length, 0, 'a discarded event was delivered')
      assert.is(await store.count(), 0)
    }),
  )
}

test.run()

// --- Internal helpers ---

/** A store namespace on `url` holding one dead letter of device d1, a receiver, and a way to start contender processes (stopped after `run`). */
async function withDeadLetter(
  url: string,
  run: (context: {
    store: ReturnType<typeof createOutboxStore>
    receiver: Receiver
    env: Record<'STORE_URL' | 'STORE_NAMESPACE' | 'RECEIVER_URL' | 'EVENT_ID', string>
    start: typeof startContender
  }) => Promise<void>,
): Promise<void> {
  const namespace = `zapgate-test-${randomBytes(4).toString('hex')}`
  const storage = await storageFromUrl(url, { namespace })
  const receiver = await startReceiver()
  const children: ReturnType<typeof startContender>[] = []
  try {
    const store = createOutboxStore(storage, new KeyedLock())
    const record = lateRecord('redriven-twice', 'gone-instance')
    assert.ok(await store.add(record))
    assert.ok(await store.deadLetter(outboxKey(record.deviceId, record.id), 'max-age', Date.now()))
    const env = { STORE_URL: url, STORE_NAMESPACE: namespace, RECEIVER_URL: receiver.url, EVENT_ID: record.id }
    await run({ store, receiver, env, start: childEnv => (children.push(startContender(childEnv)), children.at(-1)!) })
  } finally {
    for (const child of children) if (child.process.exitCode === null) child.process.kill()
    await receiver.stop()
    for await (const [key] of storage.list('')) await storage.delete(key)
    await storage.close!()
  }
}

function startContender(env: Record<string, string>) {
  const child = spawn(process.execPath, [...NODE_TS, 'test/helpers/redrive-contender.ts'], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', chunk => (stderr += chunk))
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  const exited = new Promise<never>((_, reject) =>
    child.on('exit', code => reject(new Error(`redrive process exited (${code}): ${stderr.trim() || 'no output'}`))),
  )
  exited.catch(() => {})
  /** Its next line of output. */
  const next = async (): Promise<string> => {
    const line = await Promise.race([lines.next(), exited])
    if (line.done) return exited
    return line.value
  }
  return { process: child, next }
}
