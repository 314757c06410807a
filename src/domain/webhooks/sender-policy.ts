import type { Logger } from '../../logger.ts'
import type { WebhookSender } from '../../ports/webhooks.ts'
import { loggableUrl } from '../../security/url-policy.ts'

/**
 * The sender's URL policy (`accepts`) as operations 3 and 4 ask it, when it has one: its `true` takes a
 * URL; anything else refuses it (400, as a URL it refuses), and what is not a plain answer is logged as
 * an error for the host: a throw (before, a 500), or a promise from a JavaScript sender's async policy
 * (before, taken as `true` however it settled, its rejection unhandled).
 */
export function senderPolicy(sender: WebhookSender, logger: Logger): ((url: string) => boolean) | undefined {
  if (!sender.accepts) return undefined
  const refused = (err: unknown, url: string, why: string) => (
    logger.error({ err, url: loggableUrl(url) }, `the webhook sender's accepts ${why}: the webhook URL is refused`),
    false
  )
  return url => {
    let verdict: unknown
    try {
      verdict = sender.accepts!(url)
    } catch (err) {
      return refused(err, url, 'threw')
    }
    if (typeof verdict === 'boolean') return verdict
    const then = (verdict as PromiseLike<unknown> | null | undefined)?.then
    if (typeof then === 'function') then.call(verdict, undefined, () => {}) // its rejection handled: what it says comes too late
    return refused(undefined, url, `answered ${typeof then === 'function' ? 'a promise' : typeof verdict}, not true or false`)
  }
}
