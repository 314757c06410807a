import { setTimeout as sleep } from 'node:timers/promises'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createGateway } from '../src/index.ts'
import type { Storage } from '../src/ports/storage.ts'
import type { Transport } from '../src/ports/transport.ts'
import { MemoryNetwork, memoryTransport } from '../adapters/transport-memory/index.ts'
import { startGateway } from './helpers/gateway.ts'
import { memoryStorage, type MemoryStorage } from './helpers/memory-storage.ts'

/**
 * A createGateway that fails partway (the transport's start throws, the store fails at a step of the
 * start) rejects with that failure and leaves nothing behind: no instance record live on its store, no
 * heartbeat or poller reading it, the transport and webhook sender stopped. A host or supervisor that
 * starts it again on the same store gets a gateway at once (before: refused as "Another gateway
 * instance ... is live on this store", or made to wait the record's ttl).
 */
const test = suite('createGateway that fails partway: nothing left running, a retry on its store starts at once')

/** Short enough that a leftover heartbeat or epoch poll shows within a wait; a record left without a heartbeat holds a retry for ttl + heartbeat. */
const instances = { heartbeatMs: 100, ttlMs: 3000 }

/** A logger keeping its warnings and errors' messages. */
function keptLogger() {
  const messages: string[] = []
  const keep = (_: unknown, msg?: string) => void messages.push(msg ?? '')
  return { messages, logger: { debug() {}, info() {}, warn: keep, error: keep } }
}

/** `store` whose call picked by `fails(method, key)` rejects once (ECONNRESET); `calls` counts every call reaching it. */
function faultyStore(store: MemoryStorage, fails: (method: string, key: string) => boolean) {
  const state = { calls: 0, failed: false }
  const storage = new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function' || name === 'connectAgain') return value
      return (key: string, ...rest: unknown[]) => {
        state.calls++
        const failing = !state.failed && fails(String(name), key)
        if (failing) state.failed = true
        if (name === 'list')
          return (async function* () {
            if (failing) throw new Error('ECONNRESET')
            yield* value.call(target, key, ...rest)
          })()
        return failing ? Promise.reject(new Error('ECONNRESET')) : value.call(target, key, ...rest)
      }
    },
  }) as Storage
  return { storage, state }
}

/** Instance records live on `store`. */
async function instanceRecords(store: MemoryStorage): Promise<string[]> {
  const keys: string[] = []
  for await (const [key] of store.list('instance:')) keys.push(key)
  return keys
}

const steps: { step: string; fails: (method: string, key: string) => boolean; transportFails?: boolean; error: RegExp }[] = [
  { step: "the transport's start throws", fails: () => false, transportFails: true, error: /^the transport would not start$/ },
  {
    step: "the store fails reading who else is live, once this instance's record is written",
    fails: (m, k) => m === 'list' && k === 'instance:',
    error: /storage list failed/,
  },
  {
    step: 'the store fails reading the cache epoch, once the heartbeat runs',
    fails: (m, k) => m === 'get' && k === 'cache-epoch',
    error: /storage get failed/,
  },
]

for (const { step, fails, transportFails, error } of steps)
  test(`${step}: createGateway rejects with that failure, leaves no live record nor anything running, and a retry on its store starts at once`, async () => {
    const store = memoryStorage()
    const faulty = faultyStore(store, fails)
    const transport: Transport = memoryTransport({ network: new MemoryNetwork() })
    const stopped: string[] = []
    if (transportFails) {
      transport.start = async () => {
        throw new Error('the transport would not start')
      }
      transport.stop = async () => {
        stopped.push('transport')
        throw new Error('the transport would not stop either')
      }
    }
    const failed = keptLogger()
    const failure = await createGateway({
      storage: faulty.storage,
      transport,
      logger: failed.logger,
      instances,
      webhooks: { send: async () => ({ status: 200 }), close: async () => void stopped.push('webhook sender') },
    }).then(
      () => undefined,
      (err: Error) => err,
    )
    assert.instance(failure, Error, 'createGateway rejects')
    assert.match(failure!.message, error, "with the step's own failure, not a clean-up's")
    assert.equal(await instanceRecords(store), [], 'no instance record left on the store')
    const callsThen = faulty.state.calls
    await sleep(5 * instances.heartbeatMs)
    assert.is(faulty.state.calls, callsThen, 'nothing of it reads or writes the store any more (no heartbeat, no cache epoch poll)')
    assert.equal(stopped, transportFails ? ['transport', 'webhook sender'] : ['webhook sender'], 'the transport (started) and the webhook sender are stopped')

    const retry = keptLogger()
    const again = await startGateway({ storage: store.connectAgain(), logger: retry.logger, instances })
    try {
      assert.not.ok(
        retry.messages.some(msg => /waiting for its heartbeat to lapse/.test(msg)),
        `the retry did not wait for a record of the failed start (${JSON.stringify(retry.messages)})`,
      )
      await again.register()
    } finally {
      await again.stop()
    }
  })

test.run()
