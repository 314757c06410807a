/**
 * key-lookup-scaling: send-text req/s (op 8, the load of send-text-rps) through the gateway on a
 * SQLite store holding 100,000 accounts, against the same with 1,000 accounts (the baseline), same
 * file and run. The bench account and its device are created through the API on a fresh file; the
 * other accounts are inserted straight into the stopped gateway's file (see seedAccounts), then the
 * gateway is started again on it for each load. Target ratio >= 0.67: the cost of authenticating
 * and finding the device must not grow with the number of accounts.
 */
import { load, type LoadResult } from './lib/load.ts'
import { startServer } from './lib/process.ts'
import { note, report } from './lib/report.ts'
import { countRecords, seedAccounts } from './lib/seed-accounts.ts'
import { accountWithDevices, sendTextBody, type Fixture } from './lib/setup.ts'
import { tempDir } from './lib/temp.ts'

const SMALL = 1_000
const LARGE = 100_000

const dir = await tempDir('key-lookup')
const store = { file: dir.file('gateway.sqlite') }
const env = { BENCH_STORE: `sqlite://${store.file}` }

/** Send-text load on a gateway freshly started on the file. */
async function sendTextRps(fixture: Fixture): Promise<LoadResult> {
  const gateway = await startServer('gateway.mjs', env)
  try {
    return await load({ url: gateway.url, path: '/api/create-message', body: sendTextBody(fixture) })
  } finally {
    await gateway.stop()
  }
}

/** Insert accounts until the file holds `total`; logs how long that took. */
async function growTo(total: number): Promise<void> {
  const started = performance.now()
  const stored = await countRecords(store, 'account')
  await seedAccounts(store, total - stored)
  note(`inserted ${total - stored} accounts in ${((performance.now() - started) / 1000).toFixed(1)} s: ${await countRecords(store, 'account')} stored`)
}

try {
  const setup = await startServer('gateway.mjs', env)
  let fixture: Fixture
  try {
    fixture = await accountWithDevices(setup, 1)
  } finally {
    await setup.stop()
  }
  await growTo(SMALL)
  const small = await sendTextRps(fixture)
  note(`${SMALL} accounts: ${small.rps.toFixed(0)} req/s (p50 ${small.p50} ms, p99 ${small.p99} ms)`)
  await growTo(LARGE)
  const large = await sendTextRps(fixture)
  note(`${LARGE} accounts: ${large.rps.toFixed(0)} req/s (p50 ${large.p50} ms, p99 ${large.p99} ms)`)
  report({ name: 'key-lookup-scaling', value: large.rps, unit: 'req/s', baseline: small.rps, target: { of: 'ratio', op: '>=', limit: 0.67 } })
} finally {
  await dir.remove()
}
