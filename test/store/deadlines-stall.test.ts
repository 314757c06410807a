import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { suite } from 'uvu'
import { Deadlines } from '../../src/store/deadlines.ts'

/**
 * A process whose event loop stalls (CPU starvation on a loaded host, a long synchronous job such as
 * Baileys generating 812 pre-keys at a first login) must not take a store whose answer is already
 * waiting on its socket for a hung one. Seen in the real-stack cluster test (test/real-stack/cluster.test.ts):
 * "the store did not answer in time", then "the store answers again" 15 ms later; the failed
 * heartbeats fenced the instance and closed a device's link before its scan.
 */
const test = suite('Deadlines after a stalled event loop')

test('an answer that arrived on a socket while the loop was stalled past the limit settles the call: it does not time out', async () => {
  // Another process answers while this one is stalled: an echo over pipes.
  const echo = spawn(process.execPath, ['-e', 'process.stdin.pipe(process.stdout)'], { stdio: ['pipe', 'pipe', 'ignore'] })
  try {
    const reply = () => new Promise<string>(resolve => echo.stdout!.once('data', chunk => resolve(String(chunk))))
    const ready = reply()
    echo.stdin!.write('ready')
    assert.equal(await ready, 'ready')
    const deadlines = new Deadlines(100)
    const answer = deadlines.run(reply(), () => new Error('timed out'))
    echo.stdin!.write('pong')
    const until = Date.now() + 400
    while (Date.now() < until); // the loop stalls; the echo's answer is on the pipe within a few ms
    assert.equal(await answer.catch((err: Error) => err.message), 'pong')
  } finally {
    echo.kill('SIGKILL')
  }
})

test('a call still unanswered after the stall fails with its limit', async () => {
  const deadlines = new Deadlines(50)
  const answer = deadlines.run(new Promise(() => {}), () => new Error('timed out'))
  const until = Date.now() + 100
  while (Date.now() < until);
  assert.equal(await answer.catch((err: Error) => err.message), 'timed out')
})

test.run()
