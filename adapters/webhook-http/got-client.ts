import type { Agents, BeforeRequestHook, Got } from 'got'

/** The settings every delivery shares, set once on the client: a request passes only its body, headers and time-out. */
export const SHARED_OPTIONS = {
  retry: { limit: 0 },
  followRedirect: false,
  throwHttpErrors: false,
  headers: { 'content-type': 'application/json', 'user-agent': 'zapgate-webhooks/1' },
} as const

/**
 * A got `beforeRequest` hook: the request's `cacheOptions` become `{}`, got's documented default
 * (they only matter with the `cache` option, which the sender never sets). got copies them into the
 * native request options with a leading spread (`{...cacheOptions, <30 properties>}`); on Node 20,
 * spreading the four-key object got keeps there makes that literal cost 70 to 90 µs of CPU a request
 * (about as much as the rest of a keep-alive POST's client side), an empty one 6 to 12 µs. It goes
 * through the public setter only: got itself still builds every request's options.
 */
const withoutCacheOptions: BeforeRequestHook = options => {
  options.cacheOptions = {}
}

/** The got client of the webhook sender: no redirects, no retries of its own (the outbox retries), any status answered. */
export function webhookClient(baseGot: Got, agent: Agents): Got {
  return baseGot.extend({ ...SHARED_OPTIONS, agent, hooks: { beforeRequest: [withoutCacheOptions] } })
}
