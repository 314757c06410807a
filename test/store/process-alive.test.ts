import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { ownStamp, processAlive } from '../../src/store/process-alive.ts'
import { waitFor } from '../helpers/gateway.ts'

const test = suite('processAlive: whether the process a record names still runs')
const linux = existsSync('/proc/self/stat')

test('this process is alive, by pid and by its own stamp', () => {
  assert.is(processAlive(process.pid), true)
  assert.is(processAlive(ownStamp()), true)
  assert.is(ownStamp().pid, process.pid)
  if (linux) {
    assert.type(ownStamp().startTicks, 'number')
    assert.match(ownStamp().bootId ?? '', /^[0-9a-f-]{36}$/)
  }
})

test('an exited and reaped process is gone; so are pids that cannot be', () => {
  const { pid } = spawnSync(process.execPath, ['-e', '0'])
  assert.is(processAlive(pid!), false)
  assert.is(processAlive(0), false)
  assert.is(processAlive(-1), false)
})

test('a process of another user (pid 1) is alive', () => {
  assert.is(processAlive(1), true)
})

if (linux) {
  test('a live pid with another start time, or of another boot, is another process: gone', () => {
    const own = ownStamp()
    assert.is(processAlive({ ...own, startTicks: own.startTicks! + 1 }), false)
    assert.is(processAlive({ ...own, bootId: '00000000-0000-0000-0000-000000000000' }), false)
  })

  test('a zombie (killed, not yet reaped by its parent) is gone, though kill(pid, 0) still finds it', async () => {
    // `sleep 0` runs in the background of a shell that then becomes `sleep 60`, which never reaps it (killed at the end).
    const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] })
    try {
      const pid = Number(await new Promise<string>(resolve => parent.stdout.once('data', d => resolve(String(d)))))
      await waitFor(() => /\)\s+Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8')), 20_000, 'the child to become a zombie')
      assert.not.throws(() => process.kill(pid, 0), 'kill(pid, 0) calls it alive')
      assert.is(processAlive(pid), false)
    } finally {
      parent.kill('SIGKILL')
    }
  })
}

test.run()
