import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { resolveOptions } from '../src/resolve-options.ts'

/**
 * Options are resolved once, in one place (src/options.ts, src/resolve-options.ts): with nothing
 * given, the resolved settings are the defaults README and docs/api.md document; an option given as
 * undefined takes its default; a bad value is a clear Error at start-up.
 */
const test = suite('gateway options resolved in one place')

const MB = 1024 ** 2

test('nothing given: the documented defaults', () => {
  const resolved = resolveOptions({})
  assert.is(resolved.httpStatus, 'mirror')
  assert.equal(resolved.plans, { '1': { name: 'Gratuito', days: 30 } })
  assert.is(resolved.allowPrivateUrls, false)
  assert.is(resolved.timeZone, 'UTC')
  assert.is(resolved.bodyLimitBytes, 20 * MB)
  assert.is(resolved.cacheTtlMs, 2000)
  assert.ok(resolved.spillDir.endsWith('zapgate-spill'))
  assert.is(resolved.storageTimeoutMs, 2000)
  assert.is(resolved.bodyTimeoutMs, 30_000)
  assert.is(resolved.shutdownGraceMs, 10_000)
  assert.is(resolved.mediaBytesInFlight, 200 * MB)
  assert.equal(resolved.instances, { heartbeatMs: 3000, ttlMs: 15_000 })
  assert.is(resolved.cluster, undefined)
  assert.is(resolved.webhookDelivery.timeoutMs, 15_000)
  assert.is(resolved.webhookDelivery.maxAgeMs, 72 * 3_600_000)
  assert.is(resolved.webhookDelivery.retryMs.length, 9)
  assert.equal(resolved.agents, { responder: undefined, timeoutMs: 30_000, historyLimit: 20 })
  const { otpSecret, ...messaging } = resolved.messaging
  assert.ok(otpSecret.length > 20, 'a secret of its own for this process')
  assert.equal(messaging, {
    mediaMaxBytes: 16 * MB,
    mediaTimeoutMs: 30_000,
    sendTimeoutMs: 30_000,
    minIntervalMs: 0,
    intervalJitterMs: 0,
    sendQueueLimit: 1_000,
    scheduleRetryMs: [60_000, 300_000, 900_000],
    schedulePollMs: 15_000,
    scheduleMaxWaitMs: 86_400_000,
    scheduleQuota: { maxPending: 10_000, maxBytes: 256 * MB },
    otpTtlMs: 300_000,
    otpMaxTries: 5,
  })
  assert.equal(resolved.service, { docs: true, metrics: false, healthTimeoutMs: 5000, httpStatus: 'mirror' })
  assert.is(resolved.shareLinkTtlMs, 86_400_000)
  assert.equal(resolved.rateLimits.perAccount, { points: 3000, duration: 60 })
  assert.equal(resolved.rateLimits.registrations, { points: 20, duration: 3600 })
})

test('given values win; undefined takes the default; the cluster secret derives the OTP key', () => {
  const resolved = resolveOptions({
    mediaTimeoutMs: undefined,
    sendQueueLimit: 5,
    bodyLimit: '1kb',
    docs: false,
    metrics: {},
    rateLimit: false,
    baseUrl: 'https://gw.example/api//',
    cluster: { secret: 's'.repeat(16), advertiseUrl: 'http://10.0.0.1:3000/' },
  })
  assert.is(resolved.messaging.mediaTimeoutMs, 30_000)
  assert.is(resolved.messaging.sendQueueLimit, 5)
  assert.is(resolved.bodyLimitBytes, 1024)
  assert.equal(resolved.service, { docs: false, metrics: { registry: undefined }, healthTimeoutMs: 5000, httpStatus: 'mirror' })
  assert.is(resolved.rateLimits.perAccount, false)
  assert.is(resolved.baseUrl, 'https://gw.example/api')
  assert.is(resolved.cluster?.advertiseUrl, 'http://10.0.0.1:3000')
  const again = resolveOptions({ cluster: { secret: 's'.repeat(16), advertiseUrl: 'http://10.0.0.2:3000' } })
  assert.is(resolved.messaging.otpSecret, again.messaging.otpSecret, "every instance of a cluster verifies the others' codes")
})

test('bad values are refused at start-up, naming the option', () => {
  const refused: [Parameters<typeof resolveOptions>[0], RegExp][] = [
    [{ timeZone: 'Mars/Olympus' }, /timeZone/],
    [{ httpStatus: 'never' as 'mirror' }, /httpStatus/],
    [{ cacheTtlMs: -1 }, /cacheTtlMs must be a number >= 0/],
    [{ healthTimeoutMs: 0 }, /healthTimeoutMs must be a positive number of ms/],
    [{ shareLinkTtlMs: Number.POSITIVE_INFINITY }, /shareLinkTtlMs must be a positive number of ms/],
    [{ webhookRetryMs: [] }, /webhookRetryMs/],
    [{ webhookMaxAgeMs: Number.NaN }, /webhookMaxAgeMs/],
    [{ agentHistoryLimit: 1.5 }, /agentHistoryLimit/],
    [{ sendQueueLimit: 0 }, /sendQueueLimit must be a whole number > 0/],
    // Counts, as agentHistoryLimit and scheduleQuota.maxPending: 1.5 was taken and acted as 2.
    [{ sendQueueLimit: 1.5 }, /sendQueueLimit must be a whole number > 0/],
    [{ otpMaxTries: 1.5 }, /otpMaxTries must be a whole number > 0/],
    [{ otpSecret: '' }, /otpSecret/],
    [{ instances: { heartbeatMs: 3000, ttlMs: 4000 } }, /ttlMs must be at least twice/],
    [{ plans: { '1': { name: 'x', days: 0 } } }, /plan 1/],
    [{ bodyLimit: 'lots' }, /cannot read size/],
    // Links were made from these as given: `gw.example.com/qr/…` (no scheme), `/qr/…` (empty), `https://gw.example/?a=1/qr/…`.
    [{ baseUrl: 'gw.example.com' }, /baseUrl must be an absolute http/],
    [{ baseUrl: 'gw.example.com:3000/api' }, /baseUrl must be an absolute http/],
    [{ baseUrl: '' }, /baseUrl must be an absolute http/],
    [{ baseUrl: 'ftp://gw.example' }, /baseUrl must be an absolute http/],
    [{ baseUrl: 'https://gw.example/?a=1' }, /baseUrl must be an absolute http/],
    // On/off options read as JavaScript truth: 'false' (an environment value passed on) let webhook and media URLs reach private addresses, served /docs, turned /metrics on.
    [{ allowPrivateUrls: 'false' as unknown as boolean }, /allowPrivateUrls must be true or false/],
    [{ allowPrivateUrls: 1 as unknown as boolean }, /allowPrivateUrls must be true or false/],
    [{ docs: 'false' as unknown as boolean }, /docs must be true or false/],
    [{ metrics: 'false' as unknown as boolean }, /metrics must be true, false or/],
  ]
  for (const [options, message] of refused) assert.throws(() => resolveOptions(options), message, JSON.stringify(options))
})

test('a cluster.advertiseUrl on a port fetch refuses is refused at start-up: the media relay to that instance would fail every time', () => {
  // Before: taken. The instances' forwards (undici) reached it, but every /media/<token> relayed to it answered 503 (`bad port`), and clients ignored its hint.
  for (const advertiseUrl of ['http://10.0.0.1:6000', 'http://gw-2.internal:5060/', 'https://10.0.0.1:6666', 'http://10.0.0.1:10080/gw'])
    assert.throws(
      () => resolveOptions({ cluster: { secret: 's'.repeat(16), advertiseUrl } }),
      /cluster\.advertiseUrl .*port .*fetch refuses.*GATEWAY_ADVERTISE_URL/,
      advertiseUrl,
    )
  // The default ports and ordinary ones stay fine.
  for (const advertiseUrl of ['http://10.0.0.1', 'https://gw-2.internal:443', 'http://10.0.0.1:6001', 'http://10.0.0.1:8080'])
    assert.ok(resolveOptions({ cluster: { secret: 's'.repeat(16), advertiseUrl } }).cluster, advertiseUrl)
})

test.run()
