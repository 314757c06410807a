import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { MediaLoader } from '../../../src/domain/messaging/media-loader.ts'
import { MediaBudget } from '../../../src/domain/messaging/media-budget.ts'
import { MediaFetchError, type FetchedMedia, type MediaFetcher } from '../../../src/ports/media.ts'
import { GatewayError } from '../../../src/errors.ts'
import { PNG } from '../../helpers/samples.ts'

/**
 * A fetcher that `reportsBytes` is counted by the bytes it reports, not by the largest file: the
 * hold grows as it reports (never past maxBytes), a download the budget cannot take is aborted
 * and refused media-budget-exceeded, and every byte is given back.
 */
const test = suite('media loader: a download holds the bytes its fetcher reports')

const MAX = 1000
const limits = { maxBytes: MAX, timeoutMs: 60_000 }

/** A fetcher that reports `steps` then waits for `finish`, failing when its signal aborts. */
function reportingFetcher(steps: number[]) {
  const seen: { aborted?: boolean; finish?: () => void } = {}
  const fetcher: MediaFetcher = {
    reportsBytes: true,
    fetch: (_url, { signal, onBytes }) =>
      new Promise<FetchedMedia>((resolve, reject) => {
        signal?.addEventListener('abort', () => ((seen.aborted = true), reject(new MediaFetchError('unreachable', 'aborted'))))
        for (const bytes of steps) onBytes?.(bytes)
        seen.finish = () => resolve({ data: PNG, contentType: 'image/png' })
      }),
  }
  return { fetcher, seen }
}

const turns = async () => {
  for (let i = 0; i < 5; i++) await new Promise(resolve => setImmediate(resolve))
}

test('the hold follows the reported bytes (at most maxBytes), then the size', async () => {
  const { fetcher, seen } = reportingFetcher([300, 200, 5000])
  const hold = new MediaBudget(10 * MAX).hold()
  const images = new MediaLoader(fetcher, limits).cardImages(['http://x/a.png'], hold)
  await turns()
  assert.equal(hold.held(), MAX, 'reported past maxBytes: held at maxBytes (the fetcher refuses the rest)')
  seen.finish!()
  await images
  assert.equal(hold.held(), PNG.length)
})

test('past the budget the download is aborted and refused 429, and nothing stays held', async () => {
  const budget = new MediaBudget(MAX)
  const other = budget.hold(600)
  const { fetcher, seen } = reportingFetcher([300, 500])
  const hold = budget.hold()
  await assert.rejects(new MediaLoader(fetcher, limits).cardImages(['http://x/a.png'], hold), (err: unknown) => {
    assert.ok(err instanceof GatewayError && err.code === 'media-budget-exceeded', String(err))
    return true
  })
  assert.equal(seen.aborted, true, 'the download was stopped')
  assert.deepEqual([hold.held(), other.held()], [0, 600])
})

// A fetcher that does not report holds the largest file while it runs: test/domain/messaging/card-images.test.ts.

test.run()
