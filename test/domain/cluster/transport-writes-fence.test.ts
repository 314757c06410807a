import { once } from 'node:events'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as baileys from '@whiskeysockets/baileys'
import { loadAuthState } from '../../../adapters/transport-baileys/auth-state.ts'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import { createGateway, type Gateway } from '../../../src/index.ts'
import { internalsOf } from '../../../src/internals.ts'
import type { Storage } from '../../../src/ports/storage.ts'
import type { TransportContext } from '../../../src/ports/transport.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { rejectionOf } from '../../helpers/rejection.ts'

/**
 * A cluster instance that was paused (SIGSTOP, a long GC) past its fence may have had its devices
 * taken over: the transport's writes (Baileys signal keys and creds) must not reach the store until
 * its heartbeat reached the store again, or they overwrite the new holder's signal state.
 */
const test = suite('cluster: transport writes refused while the instance is fenced')

/**
 * Fenced two thirds of the ttl (1 s) after the last heartbeat was sent. Not shorter: with a 300 ms
 * ttl a test process the machine stalled for 200 ms (CI runs files side by side on 2 cores) fenced
 * itself before its pause, and the write meant to land first was refused (seen with 4 files at once).
 */
const INSTANCES = { heartbeatMs: 100, ttlMs: 1_500 }
/** Longer than the fence's 1 s: the instance wakes fenced. */
const PAUSE_MS = 1_100

/** Block the event loop for `ms`, as a paused process: no timer, no heartbeat runs meanwhile. */
function pauseProcess(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until) {
    // a stopped process: nothing else runs
  }
}

/** A cluster gateway on a memory store whose transport's writes can be held; the context its transport was given. */
async function clusterGateway() {
  const store = memoryStorage()
  let held: Promise<void> | undefined
  let release = () => {}
  const storage: Storage = {
    ...store,
    async set(key, value, ttlMs) {
      if (key.startsWith('transport:')) await held
      return store.set(key, value, ttlMs)
    },
  }
  const transport = memoryTransport({ network: new MemoryNetwork() })
  const start = transport.start.bind(transport)
  let context: TransportContext | undefined
  transport.start = async given => ((context = given), start(given))
  const gateway = await createGateway({
    storage,
    transport,
    instances: INSTANCES,
    cluster: { secret: 'a cluster secret of enough length', advertiseUrl: 'http://127.0.0.1:2' },
  })
  return {
    gateway,
    store,
    context: context!,
    instances: internalsOf(gateway).instances,
    holdWrites: () => void (held = new Promise(resolve => (release = resolve))),
    releaseWrites: () => release(),
  }
}

let gateway: Gateway | undefined
test.after.each(async () => {
  await gateway?.close()
  gateway = undefined
})

test('after a pause past the fence no write of the transport reaches the store, reads still work; after the rejoin writes land', async () => {
  const cluster = await clusterGateway()
  gateway = cluster.gateway
  const { context, store } = cluster
  await context.storage.set('device:d1:auth:creds', 'creds of this holder')
  await context.storage.set('device:d1:auth:key:pre-key:1', 'pre-key')
  assert.is(await store.get('transport:device:d1:auth:creds'), 'creds of this holder')

  pauseProcess(PAUSE_MS) // woken: nothing has run since, not even a timer tick, yet the fence is up
  const rejoined = once(cluster.instances.events, 'rejoin')
  const writes = {
    set: context.storage.set('device:d1:auth:creds', 'stale creds'),
    delete: context.storage.delete('device:d1:auth:key:pre-key:1'),
    add: context.storage.add!('device:d1:auth:key:session:1', 'stale session'),
    compareAndSet: context.storage.compareAndSet!('device:d1:auth:creds', 'creds of this holder', 'stale creds'),
    deleteIfEqual: context.storage.deleteIfEqual!('device:d1:auth:key:pre-key:1', 'pre-key'),
    increment: context.storage.increment!('device:d1:counter', 1),
  }
  const read = context.storage.get('device:d1:auth:creds')
  for (const [step, write] of Object.entries(writes)) {
    const err = await rejectionOf(write, step)
    assert.match(err.message, /write refused: this instance is fenced/, step)
  }
  assert.is(await read, 'creds of this holder', 'reads are allowed')
  assert.is(await store.get('transport:device:d1:auth:creds'), 'creds of this holder')
  assert.is(await store.get('transport:device:d1:auth:key:pre-key:1'), 'pre-key')
  assert.is(await store.get('transport:device:d1:auth:key:session:1'), undefined)
  assert.is(await store.get('transport:device:d1:counter'), undefined)

  await rejoined // a heartbeat sent after the pause reached the store
  await context.storage.set('device:d1:auth:creds', 'creds after the rejoin')
  assert.is(await store.get('transport:device:d1:auth:creds'), 'creds after the rejoin')
})

test('a creds write queued in the auth state before the pause, behind one in flight, is refused when handed to the store', async () => {
  const cluster = await clusterGateway()
  gateway = cluster.gateway
  const auth = await loadAuthState(cluster.context.storage, 'device:d1:auth:', baileys)
  cluster.holdWrites()
  auth.state.creds.me = { id: '5511999990001:1@s.whatsapp.net', name: 'first' }
  const first = auth.saveCreds() // handed to the store before the pause: it lands (the window docs/scaling.md names)
  await new Promise(resolve => setImmediate(resolve))
  auth.state.creds = { ...auth.state.creds, me: { id: '5511999990002:1@s.whatsapp.net', name: 'queued' } }
  const queued = auth.saveCreds() // waits in the auth state's queue behind the first

  pauseProcess(PAUSE_MS)
  cluster.releaseWrites()
  await first
  const err = await rejectionOf(queued, 'the queued creds write')
  assert.match(err.message, /this instance is fenced/)
  const stored = JSON.parse((await cluster.store.get<string>('transport:device:d1:auth:creds'))!)
  assert.is(stored.me.name, 'first', 'the queued write did not reach the store')
})

test.run()
