import { randomBytes } from 'node:crypto'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { storageFromUrl } from '../../../adapters/storage-keyv/index.ts'
import type { Devices } from '../../../src/domain/devices.ts'
import { eventId, outboxKey, type OutboxRecord } from '../../../src/domain/webhooks/outbox-store.ts'
import { WebhookOutbox } from '../../../src/domain/webhooks/outbox.ts'
import { webhookPayload } from '../../../src/domain/webhooks/payload.ts'
import { GatewayEvents } from '../../../src/events.ts'
import { silentLogger } from '../../../src/logger.ts'
import type { WebhookSender } from '../../../src/ports/webhooks.ts'
import { KeyedLock } from '../../../src/store/keyed-lock.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { device, devices, message, settings } from '../../helpers/outbox.ts'
import { soloLiveness } from '../../helpers/solo-liveness.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { needing, POSTGRES, REDIS } from '../../helpers/requires.ts'
import { countingReceiver, startDeliverer, type Deliverer } from '../../helpers/webhook-processes.ts'

/**
 * A webhook event is POSTed by a process only while it holds the event (docs/scaling.md, "Where a
 * duplicate can happen"), also when that process stalls (SIGSTOP, a long GC, a frozen VM) between its
 * claim and its POST: separate node processes (test/helpers/webhook-deliverer.ts). A's second event
 * waits in its sender's queue (one POST of a device at once) behind a first one the receiver holds;
 * A is stopped, B judges it gone (its heartbeat stood still for the ttl), adopts both and delivers
 * the second; then A resumes. Before, A POSTed the second event too once its queue moved on (the
 * receiver got it twice, the second time from a process that no longer held it). Outside cluster mode
 * too: B then starts once A's heartbeat lapsed (the wait at start), and adopts A's events.
 */
const test = suite('webhook outbox: a process paused between its claim and its POST')

for (const service of [REDIS, POSTGRES]) {
  const storeTest = needing(test, service, `paused webhook processes on ${service.name}`)

  for (const cluster of [true, false])
    storeTest(
      `on ${service.name}${cluster ? '' : " outside cluster mode (a process started once the first one's heartbeat lapsed)"}, an event claimed by a process that stalls before POSTing it, adopted and delivered by another, is POSTed once`,
      async () => {
        const namespace = `zapgate-test-${randomBytes(4).toString('hex')}`
        const storage = await storageFromUrl(service.value!, { namespace })
        const receiver = await countingReceiver()
        const children: Deliverer[] = []
        const start = (env: Record<string, string>) => (
          children.push(
            startDeliverer({ STORE_URL: service.value!, STORE_NAMESPACE: namespace, RECEIVER_URL: receiver.url, CLUSTER: cluster ? '1' : '0', ...env }),
          ),
          children.at(-1)!
        )
        const record = async (text: string) => {
          for await (const [, found] of storage.list<OutboxRecord>('webhook-outbox:')) if (JSON.parse(found.body).text === text) return found
          return undefined
        }
        try {
          const a = start({ RECORD: 'first,second', PER_DEVICE: '1' })
          const aId = (await a.line(line => line.startsWith('instance '))).slice('instance '.length)
          await waitFor(() => receiver.posts('first') === 1, 10_000, "A's POST of the first event")
          await waitFor(async () => (await record('second'))?.lease?.owner === aId, 10_000, 'A claimed the second event')
          a.process.kill('SIGSTOP')
          try {
            start({})
            await waitFor(async () => receiver.posts('second') === 1 && (await record('second')) === undefined, 15_000, 'B delivered the second event')
          } finally {
            a.process.kill('SIGCONT')
          }
          receiver.release()
          const outcome = await a.line(line => line.startsWith('sender second '))
          const posts = receiver.posts('second')
          assert.is(posts, 1, `the second event was POSTed ${posts} times (A: ${a.lines.join(' | ')})`)
          assert.is(receiver.ids('second').size, 1, 'one webhook-id')
          assert.match(outcome, 'not begun', "A's sender did not begin the POST")
        } finally {
          for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL')
          await receiver.close()
          for await (const [key] of storage.list('')) await storage.delete(key)
          await storage.close!()
        }
      },
    )
}

test("an event whose process was fenced (and the fence lifted) while it waited in the sender's queue is not POSTed then, not counted, and goes once its holder tries again", async () => {
  const storage = memoryStorage()
  const fence = { fenceUp: false, fenceCount: 0 }
  let queued!: () => void
  const inQueue = new Promise<void>(resolve => (queued = resolve))
  let moveOn!: () => void
  const queueMoves = new Promise<void>(resolve => (moveOn = resolve))
  const posted: string[] = []
  const calls: (boolean | undefined)[] = []
  // A sender with a queue: the first call waits in it until the test lets it move on; each call asks mayBegin right before its POST.
  const sender: WebhookSender = {
    async send(delivery) {
      if (calls.length === 0) (queued(), await queueMoves)
      calls.push(delivery.mayBegin?.())
      if (delivery.mayBegin?.() === false) throw new Error('not begun')
      posted.push(delivery.headers['webhook-id'])
      return { status: 200 }
    },
  }
  const events = new GatewayEvents()
  const failed: unknown[] = []
  events.on('delivery-failed', event => void failed.push(event))
  const box = new WebhookOutbox({
    ...{ storage, lock: new KeyedLock(), devices, sender, events, logger: silentLogger },
    ...{ settings: settings({ retryMs: [60_000] }), liveness: soloLiveness(), fence },
  })
  await box.start()
  try {
    await box.record(device('d1'), message('m1'))
    await inQueue
    // A pause past two thirds of the ttl, and a heartbeat since: fenced, then the fence lifted (another may have taken the event over meanwhile).
    fence.fenceCount++
    moveOn()
    await waitFor(() => calls.length === 1, 5_000, 'the sender asked mayBegin')
    assert.equal(calls, [false], 'refused: fenced since the claim')
    const key = outboxKey('d1', eventId('d1', webhookPayload(device('d1'), message('m1'))!))
    const record = await storage.get<OutboxRecord>(`webhook-outbox:${key}`)
    assert.is(record?.attempts, 0, 'not an attempt')
    assert.equal(failed, [], 'no delivery-failed: nothing was POSTed')
    await waitFor(async () => (await box.pending()) === 0, 5_000, 'delivered on the next try')
    assert.equal(calls, [false, true])
    assert.is(posted.length, 1)
  } finally {
    await box.close()
  }
})

test('an event claimed while its process was still fenced (back from a pause, its heartbeat not yet in the store) is not POSTed by that attempt, even once the fence lifts', async () => {
  const storage = memoryStorage()
  const fence = { fenceUp: true, fenceCount: 1 }
  // The device is read right after the claim: the heartbeat lands then (the fence lifts, its count unchanged), as it can after a claim written first.
  let reads = 0
  const liftingDevices = { ...devices, get: async (id: string) => (++reads === 1 && (fence.fenceUp = false), devices.get(id)) } as unknown as Devices
  const posted: number[] = []
  const sender: WebhookSender = {
    async send(delivery) {
      if (delivery.mayBegin?.() === false) throw new Error('not begun')
      posted.push(reads)
      return { status: 200 }
    },
  }
  const box = new WebhookOutbox({
    ...{ storage, lock: new KeyedLock(), devices: liftingDevices, sender, events: new GatewayEvents(), logger: silentLogger },
    ...{ settings: settings({ retryMs: [60_000] }), liveness: soloLiveness(), fence },
  })
  await box.start()
  try {
    await box.record(device('d1'), message('m1'))
    await waitFor(async () => (await box.pending()) === 0, 5_000, 'delivered')
    // Its claim may have landed before the heartbeat that registered this process again, and been taken for a gone process's claim.
    assert.equal(posted, [2], 'POSTed by the next attempt, whose claim came after the fence lifted, not by the one claimed while fenced')
  } finally {
    await box.close()
  }
})

test.run()
