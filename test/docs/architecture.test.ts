import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const root = new URL('../..', import.meta.url).pathname
const map = readFileSync(join(root, 'docs/architecture.md'), 'utf8')
const architecture = suite('docs/architecture.md: the map stays true to the tree')

/** The repository paths the page names in code spans (`src/...`, `adapters/...`, `test/...`, `docs/...`, `examples/...`). */
function namedPaths(text: string): string[] {
  return [...text.matchAll(/`((?:src|adapters|test|docs|examples)\/[^`\s]*)`/g)].map(match => match[1])
}

architecture('every src/, adapters/, test/ and docs/ path the page names exists', () => {
  const paths = namedPaths(map)
  assert.ok(paths.length >= 40, `the page names its files by path (found ${paths.length})`)
  const missing = paths.filter(path => !existsSync(join(root, path)))
  assert.equal(missing, [], 'paths named in docs/architecture.md that do not exist')
})

architecture('every middleware module the router is built from is on the page', () => {
  const router = readFileSync(join(root, 'src/http/router.ts'), 'utf8')
  const modules = [...router.matchAll(/^import [^\n]*from '\.\/([^']+)'/gm)].map(match => `src/http/${match[1]}`)
  assert.ok(modules.length >= 8, `router.ts imports its middleware (found ${modules.length})`)
  const named = new Set(namedPaths(map))
  assert.equal(
    modules.filter(module => !named.has(module)),
    [],
    'router modules missing from docs/architecture.md',
  )
})

architecture('the README links the page', () => {
  assert.ok(readFileSync(join(root, 'README.md'), 'utf8').includes('](docs/architecture.md)'), 'README.md links docs/architecture.md')
})

architecture.run()
