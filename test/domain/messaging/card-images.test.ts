import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { MediaLoader } from '../../../src/domain/messaging/media-loader.ts'
import { MediaBudget } from '../../../src/domain/messaging/media-budget.ts'
import { MediaFetchError, type FetchedMedia, type MediaFetcher } from '../../../src/ports/media.ts'
import { GatewayError } from '../../../src/errors.ts'
import { PNG } from '../../helpers/samples.ts'

/**
 * A carousel's card images download together. When one fails, the request is answered with that
 * failure and its media hold given back: the other downloads must not run on uncounted. They are
 * aborted (a fetcher that listens stops at once), and the failure is thrown only once every one
 * of them has ended, so one that ignores the signal still holds its share until then.
 */
const test = suite('card images: a failed card stops the other downloads, which hold their budget until they end')

const MAX = 1000
const limits = { maxBytes: MAX, timeoutMs: 60_000 }

/** A fetcher whose `/fail` URLs fail at once and whose other URLs wait for `finish` (listening to the signal when `listens`). */
function slowFetcher(listens: boolean) {
  const pending: { url: string; signal?: AbortSignal; finish(): void }[] = []
  const fetcher: MediaFetcher = {
    fetch(url, { signal }) {
      if (url.endsWith('/fail')) return Promise.reject(new MediaFetchError('bad-status', 'the server answered 404', { statusCode: 404 }))
      return new Promise<FetchedMedia>((resolve, reject) => {
        pending.push({ url, signal, finish: () => resolve({ data: PNG, contentType: 'image/png' }) })
        if (listens) signal?.addEventListener('abort', () => reject(new MediaFetchError('unreachable', 'aborted')))
      })
    },
  }
  return { fetcher, pending }
}

const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise(resolve => setImmediate(resolve))
}

test('a fetcher that ignores the signal: the failure waits for the slow download, which stays counted till it ends', async () => {
  const { fetcher, pending } = slowFetcher(false)
  const budget = new MediaBudget(10 * MAX)
  const hold = budget.hold()
  const answered: { outcome?: unknown } = {}
  const images = new MediaLoader(fetcher, limits).cardImages(['http://x/slow.png', 'http://x/fail'], hold).then(
    () => (answered.outcome = 'sent'),
    err => (answered.outcome = err),
  )
  await turns()
  assert.equal(pending.length, 1)
  assert.equal(pending[0].signal?.aborted, true, 'the slow download was told to stop')
  assert.equal(answered.outcome, undefined, 'not answered while the slow download runs')
  assert.equal(hold.held(), MAX, 'the slow download still holds the largest file')
  pending[0].finish()
  await images
  const outcome = answered.outcome as unknown
  assert.ok(outcome instanceof GatewayError && outcome.code === 'media-bad-status', String(outcome))
})

test('a fetcher that listens: the slow download stops, the first failure is thrown and nothing stays held', async () => {
  const { fetcher, pending } = slowFetcher(true)
  const hold = new MediaBudget(10 * MAX).hold()
  await assert.rejects(new MediaLoader(fetcher, limits).cardImages(['http://x/a.png', 'http://x/fail', 'http://x/b.png'], hold), (err: unknown) => {
    assert.ok(err instanceof GatewayError && err.code === 'media-bad-status', String(err))
    return true
  })
  assert.deepEqual(
    pending.map(p => [p.url, p.signal?.aborted]),
    [
      ['http://x/a.png', true],
      ['http://x/b.png', true],
    ],
  )
  assert.equal(hold.held(), 0)
})

test('no failure: every image, in card order, and the hold keeps their sizes', async () => {
  const { fetcher, pending } = slowFetcher(true)
  const hold = new MediaBudget(10 * MAX).hold()
  const images = new MediaLoader(fetcher, limits).cardImages(['http://x/a.png', 'http://x/b.png'], hold)
  await turns()
  pending[1].finish()
  pending[0].finish()
  assert.deepEqual(
    (await images).map(i => i.mimetype),
    ['image/png', 'image/png'],
  )
  assert.equal(hold.held(), 2 * PNG.length)
})

test.run()
