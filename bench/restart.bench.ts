/**
 * restart-1000-devices: a SQLite store with 1,000 linked devices (created through the API on a first
 * gateway process, then stopped); the time from spawning a new gateway process on that file to the
 * first 200 answer of a send text (op 8) from the last device created, polled every 10 ms (a 409
 * "device disconnected" while the sessions resume is not yet an answer). Baseline: spawn to the first
 * 200 of the bare Koa app. Target <= 3 s.
 */
import { pollUntilOk } from './lib/poll.ts'
import { startServer } from './lib/process.ts'
import { note, report } from './lib/report.ts'
import { accountWithDevices, sendTextBody, type Fixture } from './lib/setup.ts'
import { tempDir } from './lib/temp.ts'

const DEVICES = 1_000
const path = '/api/create-message'

/** Spawn `script`, poll `body` until a 200; seconds from spawn to READY and to that 200. */
async function spawnToFirstOk(script: string, env: Record<string, string>, body: unknown): Promise<{ ready: number; ok: number; tries: number }> {
  const server = await startServer(script, env)
  try {
    const ready = (performance.now() - server.spawnedAt) / 1000
    const first = await pollUntilOk(server.url + path, body, 10, 60_000)
    return { ready, ok: (first.at - server.spawnedAt) / 1000, tries: first.tries }
  } finally {
    await server.stop()
  }
}

const dir = await tempDir('restart')
const env = { BENCH_STORE: `sqlite://${dir.file('gateway.sqlite')}` }
try {
  const setup = await startServer('gateway.mjs', env)
  let fixture: Fixture
  try {
    const started = performance.now()
    fixture = await accountWithDevices(setup, DEVICES, { by: 'code' })
    note(`linked ${DEVICES} devices through the API on SQLite in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  } finally {
    await setup.stop()
  }
  const body = sendTextBody(fixture, DEVICES - 1)

  const bare = await spawnToFirstOk('bare-koa.mjs', {}, body)
  note(`bare Koa: READY after ${bare.ready.toFixed(2)} s, first 200 after ${bare.ok.toFixed(2)} s`)
  const ours = await spawnToFirstOk('gateway.mjs', env, body)
  note(`gateway: READY after ${ours.ready.toFixed(2)} s, first 200 after ${ours.ok.toFixed(2)} s (${ours.tries} tries)`)
  report({ name: 'restart-1000-devices', value: ours.ok, unit: 's', baseline: bare.ok, target: { of: 'value', op: '<=', limit: 3 } })
} finally {
  await dir.remove()
}
