import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createInterface } from 'node:readline'
import { suite } from 'uvu'
import { storageFromUrl } from '../../adapters/storage-keyv/index.ts'
import { needing } from '../helpers/requires.ts'
import { processStores } from '../helpers/shared-backends.ts'
import { NODE_TS } from '../helpers/node-ts.ts'

/** Separate node processes, each with its own connection, racing on one store (shared work shown with real processes). */
const PROCESSES = 3
const CONTENDERS = 30
const TOTAL = PROCESSES * CONTENDERS

const stores = processStores('zapgate-processes-')

const processes = suite('storage-keyv: separate processes on one store')

for (const [name, storeUrl, service] of stores) {
  const url = storeUrl!
  const onStore = needing(processes, service, `separate processes on ${name}`)
  onStore(`${PROCESSES} node processes x ${CONTENDERS} contenders on ${name}: one add wins, one e-mail claim wins, no count or update lost`, async () => {
    const namespace = `zapgate-test-${randomBytes(4).toString('hex')}`
    const children = Array.from({ length: PROCESSES }, (_, id) => startContender(id, url, namespace))
    try {
      await Promise.all(children.map(child => child.ready))
      for (const child of children) child.process.stdin!.write('go\n')
      const results = await Promise.all(children.map(child => child.result))

      assert.equal(results.flatMap(r => r.addWins).length, 1, 'exactly one add wins across the processes')
      assert.equal(
        results.reduce((sum, r) => sum + r.addLosses, 0),
        TOTAL - 1,
        'every other add sees false',
      )
      assert.equal(results.flatMap(r => r.claimWins).length, 1, 'exactly one claim of the e-mail wins')
      assert.deepEqual(
        results.flatMap(r => r.increments).sort((a, b) => a - b),
        Array.from({ length: TOTAL }, (_, i) => i + 1),
      )

      const storage = await storageFromUrl(url, { namespace })
      try {
        const [winner] = results.flatMap(r => r.addWins)
        assert.deepEqual(await storage.get('claim'), { id: winner })
        assert.equal(await storage.get('count'), TOTAL)
        const record = await storage.get<{ count: number; by: string[] }>('record')
        assert.equal(record!.count, TOTAL, 'compare-and-set loops lost no update')
        assert.equal(new Set(record!.by).size, TOTAL)
        const counter = await storage.get<{ count: number; by: string[] }>('counter:one')
        assert.equal(counter!.count, TOTAL, 'Collection.update lost no update across processes')
        assert.equal(new Set(counter!.by).size, TOTAL)
        assert.deepEqual(await storage.get('account-email:ana@example.com'), { accountId: results.flatMap(r => r.claimWins)[0] })
        assert.ok(
          results.some(r => r.casRetries > 0),
          'the processes did collide',
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

processes.run()

// --- Internal helpers ---

interface ContenderResult {
  addWins: string[]
  addLosses: number
  increments: number[]
  casRetries: number
  updates: number
  claimWins: string[]
}

function startContender(id: number, url: string, namespace: string): { process: ChildProcess; ready: Promise<void>; result: Promise<ContenderResult> } {
  const child = spawn(process.execPath, [...NODE_TS, 'test/helpers/storage-contender.ts'], {
    env: { ...process.env, CONTENDER_ID: String(id), CONTENDERS: String(CONTENDERS), STORE_URL: url, STORE_NAMESPACE: namespace },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', chunk => (stderr += chunk))
  const lines = createInterface({ input: child.stdout! })
  const exited = new Promise<never>((_, reject) =>
    child.on('exit', code => reject(new Error(`contender ${id} exited (${code}) early: ${stderr.trim() || 'no output'}`))),
  )
  const ready = Promise.race([new Promise<void>(resolve => lines.once('line', () => resolve())), exited])
  const result = ready.then(() => Promise.race([new Promise<ContenderResult>(resolve => lines.once('line', line => resolve(JSON.parse(line)))), exited]))
  ready.catch(() => {})
  result.catch(() => {})
  return { process: child, ready, result }
}
