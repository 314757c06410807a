import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { SendQueues } from '../../../src/domain/messaging/send-queue.ts'
/** Pacing (README: intervalJitterMs is a random extra pause added to minIntervalMs). */
const test = suite('send queue: jitter alone')
test("intervalJitterMs alone (minIntervalMs 0) still spaces one device's sends, sent one after another", async () => {
  const random = Math.random
  Math.random = () => 0.999
  try {
    const queues = new SendQueues({ sendTimeoutMs: 5_000, minIntervalMs: 0, intervalJitterMs: 80, sendQueueLimit: 10 })
    const starts: number[] = []
    for (let i = 0; i < 3; i++) await queues.run('d', async () => void starts.push(performance.now()))
    for (let i = 1; i < starts.length; i++) assert.ok(starts[i]! - starts[i - 1]! >= 70, `gap ${starts[i]! - starts[i - 1]!}`)
    await queues.close()
  } finally {
    Math.random = random
  }
})
test.run()
