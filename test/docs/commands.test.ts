import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { waitFor } from '../helpers/gateway.ts'
import { freePort, watch } from '../helpers/standalone.ts'
import { npmEnv } from '../helpers/npm-env.ts'

/**
 * Every command of the README, the docs and the examples' headers that starts a server (`npm start`,
 * `npm run sim`, `npx tsx ... examples/...`, `node ... examples/...`) runs as written: started through a shell in the
 * repository, it must answer HTTP, then it is stopped. Only the port is chosen by the test (a `PORT=`
 * of the command is rewritten, else PORT is set), and the store is `memory://` unless the command
 * names one, so nothing lands in ./data. `npm ci` / `npm install` / `npm test` parts of a line
 * (`npm ci && npm start`) are what a reader runs once, not a server: they are left out.
 */

const root = new URL('../..', import.meta.url).pathname
const DOCS = ['README.md', 'SECURITY.md', 'bench/README.md', ...files('docs', '.md'), ...files('adapters', 'README.md'), ...files('examples', '.ts')]
const STARTS_A_SERVER = /(?:^|\s)(?:npm start|npm run sim|npx tsx\b.*\bexamples\/\S+|node\b.*\bexamples\/\S+)/

const commands = [...new Set(DOCS.flatMap(file => commandLines(readFileSync(join(root, file), 'utf8'))))]
const test = suite('the documented commands that start a server run as written')

test('the docs show the commands a newcomer runs', () => {
  for (const expected of [
    'npm start',
    'GATEWAY_TRANSPORT=memory npm start',
    'npm run sim',
    'examples/agent-rule-based.ts',
    'examples/mount-in-existing-app.ts',
  ])
    assert.ok(
      commands.some(command => command === expected || (expected.startsWith('examples/') && command.includes(expected))),
      `found ${expected} in ${JSON.stringify(commands)}`,
    )
})

for (const command of commands) {
  test(`\`${command}\` starts a server that answers, and stops`, async () => {
    const port = await freePort()
    const written = /\bPORT=\d+/.test(command) ? command.replace(/\bPORT=\d+/, `PORT=${port}`) : command
    const child = spawn('sh', ['-c', written], {
      cwd: root,
      env: npmEnv({ PORT: String(port), ...(/\bGATEWAY_STORE=/.test(command) ? {} : { GATEWAY_STORE: 'memory://' }), LOG_LEVEL: 'warn' }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group: stopped whole, whatever it spawned
    })
    const { output, exited } = watch(child)
    try {
      await waitFor(async () => exited() || (await answers(port)), 60_000, `\`${written}\` to answer on port ${port}`)
      assert.not.ok(exited(), `\`${written}\` exited before answering:\n${output()}`)
      process.kill(-child.pid!, 'SIGTERM')
      await waitFor(exited, 15_000, `\`${written}\` to stop on SIGTERM`)
    } finally {
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        // the group is gone
      }
    }
  })
}

test.run()

// --- Internal helpers ---

function files(dir: string, suffix: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter(name => name.endsWith(suffix) && !name.includes('node_modules'))
    .map(name => join(dir, name))
}

/** The commands in `text` that start a server: shell lines of code blocks, inline code, and comment lines of examples. */
function commandLines(text: string): string[] {
  const candidates: string[] = []
  let fence: string | undefined
  for (const line of text.split('\n')) {
    const opening = /^```(\w*)/.exec(line.trim())
    if (opening) {
      fence = fence === undefined ? opening[1] : undefined
      continue
    }
    if (fence !== undefined) {
      if (['sh', 'bash', 'shell', ''].includes(fence)) candidates.push(line)
    } else {
      for (const [, code] of line.matchAll(/`([^`]+)`/g)) candidates.push(code)
      const comment = /^\s*\*\s+(.*)$/.exec(line) // a line of a doc comment (the examples' headers)
      if (comment) candidates.push(comment[1])
    }
  }
  return candidates.flatMap(candidate => {
    if (candidate.includes('…')) return [] // a placeholder, not a command
    const parts = candidate
      .replace(/\s+#\s.*$/, '')
      .split('&&')
      .map(part => part.trim())
      .filter(part => part && !/^npm (ci|install|test)\b/.test(part))
    const command = parts.join(' && ')
    return STARTS_A_SERVER.test(command) && /^(?:[A-Z_]+=\S*\s+)*(?:npm|npx|node)\s/.test(command) ? [command] : []
  })
}

/** Whether something answers HTTP on the port (any status). */
async function answers(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) })
    return true
  } catch {
    return false
  }
}
