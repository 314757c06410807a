import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createInterface } from 'node:readline'
import { suite } from 'uvu'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { flowConversations } from '../../src/domain/flows.ts'
import { KeyedLock } from '../../src/store/keyed-lock.ts'
import { needing } from '../helpers/requires.ts'
import { processStores } from '../helpers/shared-backends.ts'
import { NODE_TS } from '../helpers/node-ts.ts'

/**
 * A contact's text handed over more than once (a transport redelivers what it was not sure the
 * gateway took: the Baileys adapter after a crash, the simulator after a stream ends), to the same
 * process and to another one on the same store: separate node processes (test/helpers/agent-contender.ts)
 * each get the same message twice at once. What the contact relies on: one reply, and the
 * conversation holds the text once.
 */
const PROCESSES = 2

const stores = processStores('zapgate-agents-')

const test = suite('agents: a redelivered text is answered once, across processes')

for (const [name, storeUrl, service] of stores) {
  const url = storeUrl!
  needing(
    test,
    service,
    `agent processes on ${name}`,
  )(`${PROCESSES} processes on ${name}, each handed the same text twice: one reply in all, the text once in the history`, async () => {
    const namespace = `zapgate-test-${randomBytes(4).toString('hex')}`
    const messageId = `3EB0${randomBytes(8).toString('hex').toUpperCase()}`
    const children = Array.from({ length: PROCESSES }, (_, id) => startContender(id, url, namespace, messageId))
    try {
      await Promise.all(children.map(child => child.ready))
      for (const child of children) child.process.stdin!.end('go\n')
      const sent = (await Promise.all(children.map(child => child.result))).flatMap(result => result.sent)
      assert.deepEqual(sent, ['re: quanto custa?'], 'the contact got one reply')
      const storage = await storageFromUrl(url, { namespace })
      try {
        const { turns } = await flowConversations(storage, new KeyedLock(), 20).history('dev-1', '5511988887777')
        assert.deepEqual(
          turns.map(turn => turn.text),
          ['quanto custa?', 're: quanto custa?'],
        )
        for await (const [key] of storage.list('')) await storage.delete(key)
      } finally {
        await storage.close!()
      }
    } finally {
      for (const child of children) if (child.process.exitCode === null) child.process.kill()
    }
  })
}

test.run()

// --- Internal helpers ---

function startContender(
  id: number,
  url: string,
  namespace: string,
  messageId: string,
): { process: ChildProcess; ready: Promise<void>; result: Promise<{ sent: string[] }> } {
  const child = spawn(process.execPath, [...NODE_TS, 'test/helpers/agent-contender.ts'], {
    env: { ...process.env, STORE_URL: url, STORE_NAMESPACE: namespace, MESSAGE_ID: messageId },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', chunk => (stderr += chunk))
  const lines = createInterface({ input: child.stdout! })
  const exited = new Promise<never>((_, reject) =>
    child.on('exit', code => reject(new Error(`agent process ${id} exited (${code}) early: ${stderr.trim() || 'no output'}`))),
  )
  const ready = Promise.race([new Promise<void>(resolve => lines.once('line', () => resolve())), exited])
  const result = ready.then(() => Promise.race([new Promise<{ sent: string[] }>(resolve => lines.once('line', line => resolve(JSON.parse(line)))), exited]))
  ready.catch(() => {})
  result.catch(() => {})
  return { process: child, ready, result }
}
