/**
 * key-lookup-scaling: send-text req/s (op 8, the load of send-text-rps) through the gateway on a
 * SQLite store holding 100,000 accounts, against the same on a store holding 1,000 accounts (the
 * baseline). The bench account and its device are created through the API on a fresh file; the
 * other accounts are inserted straight into the stopped gateway's file (see seedAccounts), which is
 * copied once it holds 1,000 and the copy grown to 100,000. A gateway on each file, both running,
 * then ROUNDS rounds of 3 s on each back to back (the order swapped every round: this shared VM's
 * speed drifts by half over tens of seconds, and a single run on each file a minute apart measured
 * the drift); the figure is the round whose ratio is the median, its two rates the value and the
 * baseline. Target ratio >= 0.67: the cost of authenticating and finding the device must not grow
 * with the number of accounts.
 */
import { copyFile, stat } from 'node:fs/promises'
import { load, type LoadResult } from './lib/load.ts'
import { startServer } from './lib/process.ts'
import { medianBy, note, pairedRounds, report } from './lib/report.ts'
import { countRecords, seedAccounts, type SqliteStore } from './lib/seed-accounts.ts'
import { accountWithDevices, sendTextBody, type Fixture } from './lib/setup.ts'
import { tempDir } from './lib/temp.ts'

const SMALL = 1_000
const LARGE = 100_000
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)

const dir = await tempDir('key-lookup')
const small = { file: dir.file('small.sqlite') }
const large = { file: dir.file('large.sqlite') }
const envOf = (store: SqliteStore) => ({ BENCH_STORE: `sqlite://${store.file}` })

/** Insert accounts until the file holds `total`; logs how long that took. */
async function growTo(store: SqliteStore, total: number): Promise<void> {
  const started = performance.now()
  const stored = await countRecords(store, 'account')
  await seedAccounts(store, total - stored)
  note(`inserted ${total - stored} accounts in ${((performance.now() - started) / 1000).toFixed(1)} s: ${await countRecords(store, 'account')} stored`)
}

/** Copy a stopped gateway's SQLite file (with its journal files, when there are any). */
async function copyStore(from: SqliteStore, to: SqliteStore): Promise<void> {
  for (const suffix of ['', '-wal', '-shm']) {
    const exists = await stat(from.file + suffix).then(
      () => true,
      () => false,
    )
    if (exists) await copyFile(from.file + suffix, to.file + suffix)
  }
}

try {
  const setup = await startServer('gateway.mjs', envOf(small))
  let fixture: Fixture
  try {
    fixture = await accountWithDevices(setup, 1)
  } finally {
    await setup.stop()
  }
  await growTo(small, SMALL)
  await copyStore(small, large)
  await growTo(large, LARGE)

  const [few, many] = await Promise.all([startServer('gateway.mjs', envOf(small)), startServer('gateway.mjs', envOf(large))])
  try {
    const body = sendTextBody(fixture)
    const run = (url: string, seconds: number): Promise<LoadResult> => load({ url, path: '/api/create-message', body, seconds, warmupSeconds: 0 })
    await run(few.url, 3)
    await run(many.url, 3)
    const rounds = await pairedRounds(
      ROUNDS,
      () => run(few.url, 3),
      () => run(many.url, 3),
      (round, { baseline, ours }) =>
        note(
          `round ${round}: ${SMALL} accounts ${baseline.rps.toFixed(0)} req/s (p99 ${baseline.p99} ms); ${LARGE} accounts ${ours.rps.toFixed(0)} req/s (p99 ${ours.p99} ms); ratio ${(ours.rps / baseline.rps).toFixed(2)}`,
        ),
    )
    const middle = medianBy(rounds, r => r.ours.rps / r.baseline.rps)
    report({ name: 'key-lookup-scaling', value: middle.ours.rps, unit: 'req/s', baseline: middle.baseline.rps, target: { of: 'ratio', op: '>=', limit: 0.67 } })
  } finally {
    await Promise.all([few.stop(), many.stop()])
  }
} finally {
  await dir.remove()
}
