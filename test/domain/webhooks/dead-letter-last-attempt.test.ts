import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { WebhookResponse, WebhookSender } from '../../../src/ports/webhooks.ts'
import { waitFor } from '../../helpers/gateway.ts'
import { memoryStorage } from '../../helpers/memory-storage.ts'
import { device, message, outbox } from '../../helpers/outbox.ts'

/**
 * A dead letter's `lastStatus` and `lastError` are those of the event's last attempt (docs/api.md,
 * "Delivery"): the status it got, or the error when it got none; never one attempt's status beside
 * an earlier attempt's error, which would tell the host a story no attempt had.
 */
const test = suite("WebhookOutbox: a dead letter tells its last attempt's outcome")

/** A sender that answers each attempt by `answers` (an Error: no answer), the last one over and over. */
function scriptedSender(answers: (number | Error)[]): WebhookSender {
  let attempt = 0
  return {
    async send(): Promise<WebhookResponse> {
      const answer = answers[Math.min(attempt++, answers.length - 1)]
      if (answer instanceof Error) throw answer
      return { status: answer }
    },
  }
}

for (const [name, answers, last] of [
  ['no answer, then 500 until its maximum age', [new Error('connect ECONNREFUSED 10.0.0.1:443'), 500], { lastStatus: 500 }],
  ['a 503, then no answer until its maximum age', [503, new Error('no answer within 1000 ms')], { lastError: 'no answer within 1000 ms' }],
  ['no answer, then 410 Gone', [new Error('connect ECONNREFUSED 10.0.0.1:443'), 410], { lastStatus: 410 }],
] as const) {
  test(`${name}: the letter keeps that last attempt's outcome only`, async () => {
    const box = outbox(memoryStorage(), scriptedSender([...answers]), { maxAgeMs: 400, retryMs: [20] })
    await box.start()
    await box.record(device('d1'), message('m1'))
    await waitFor(async () => (await box.deadLetters()).length === 1, 5_000, 'the dead letter')
    const [letter] = await box.deadLetters()
    assert.ok(letter.attempts >= 2, `${letter.attempts} attempts`)
    assert.equal({ lastStatus: letter.lastStatus, lastError: letter.lastError }, { lastStatus: undefined, lastError: undefined, ...last })
    await box.close()
  })
}

test.run()
