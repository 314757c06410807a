import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { handleShutdownSignals } from '../../examples/shutdown-signals.ts'

/**
 * examples/shutdown-signals.ts, the signal handling of npm start, npm run sim and npm run cluster.
 * The signals are emitted on `process` (no real signal: the listeners run as for one); the
 * process-tree tests (npm-group-sigterm, npm-start, local-cluster) send real ones.
 */
const test = suite('shutdown signals: the first stops, later ones are ignored, a second Ctrl-C in a terminal exits')

/** Run `body` with the handler's listeners, removed afterwards (this test process keeps its own). */
async function withHandler(
  interactive: boolean,
  body: (
    seen: { logs: string[]; stops: string[]; exits: number[]; killed: number },
    ready: (stop: (signal: NodeJS.Signals) => Promise<void>) => void,
  ) => Promise<void>,
): Promise<void> {
  const before = { SIGTERM: process.listeners('SIGTERM'), SIGINT: process.listeners('SIGINT') }
  const seen = { logs: [] as string[], stops: [] as string[], exits: [] as number[], killed: 0 }
  const log = { info: (_: object, message: string) => void seen.logs.push(message), warn: (_: object, message: string) => void seen.logs.push(message) }
  const signals = handleShutdownSignals(log, { interactive, exitNow: code => void seen.exits.push(code), beforeExit: () => void seen.killed++ })
  try {
    await body(seen, stop => signals.ready(stop))
  } finally {
    for (const name of ['SIGTERM', 'SIGINT'] as const)
      for (const listener of process.listeners(name)) if (!before[name].includes(listener)) process.off(name, listener)
  }
}

test('the first SIGTERM starts the stop once; a second SIGTERM and a SIGINT (no terminal) are logged and ignored', () =>
  withHandler(false, async (seen, ready) => {
    ready(async signal => void seen.stops.push(signal))
    process.emit('SIGTERM', 'SIGTERM')
    process.emit('SIGTERM', 'SIGTERM')
    process.emit('SIGINT', 'SIGINT')
    assert.equal(seen.stops, ['SIGTERM'])
    assert.equal(seen.exits, [])
    assert.is(seen.logs.filter(line => line.includes('ignored')).length, 2)
  }))

test('from a terminal, a second SIGINT exits at once (130), after beforeExit; a second SIGTERM still does not', () =>
  withHandler(true, async (seen, ready) => {
    ready(async signal => void seen.stops.push(signal))
    process.emit('SIGINT', 'SIGINT')
    process.emit('SIGTERM', 'SIGTERM')
    assert.equal(seen.exits, [])
    process.emit('SIGINT', 'SIGINT')
    assert.equal(seen.stops, ['SIGINT'])
    assert.equal(seen.exits, [130])
    assert.is(seen.killed, 1)
  }))

test('a signal received while starting stops the server as soon as it is ready', () =>
  withHandler(false, async (seen, ready) => {
    process.emit('SIGTERM', 'SIGTERM')
    assert.equal(seen.stops, [])
    ready(async signal => void seen.stops.push(signal))
    assert.equal(seen.stops, ['SIGTERM'])
  }))

test('a graceful stop that fails is logged and the process exits 1', () =>
  withHandler(false, async (seen, ready) => {
    ready(async () => {
      throw new Error('the store would not close')
    })
    process.emit('SIGTERM', 'SIGTERM')
    await new Promise(resolve => setImmediate(resolve))
    assert.equal(seen.exits, [1])
    assert.ok(seen.logs.includes('the graceful stop failed: exiting'))
  }))

test.run()
