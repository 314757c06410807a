import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { cycles, importsOf, sourceFiles, type ImportEdge } from './import-graph.ts'

const root = new URL('../..', import.meta.url).pathname
const layers = suite('the structure of the code')

const files = sourceFiles(root, ['src', 'adapters'])
const edges = files.flatMap(file => importsOf(root, file))
const show = (edge: ImportEdge) => `${edge.from}:${edge.line} imports ${edge.specifier}`

/**
 * The layers of src/, lowest first: a file imports only from its own layer or a lower one, so the
 * code reads in one direction: entry points -> wiring -> HTTP edge -> operations -> domain -> shared
 * helpers -> ports. The contract suites (zapgate/testing) stand on the ports alone, so a stranger's
 * adapter can run them. Every file of src/ is in a named layer (a new file is placed on purpose).
 */
const LAYERS: [name: string, test: (file: string) => boolean][] = [
  ['ports', f => f.startsWith('src/ports/') || f === 'src/logger.ts'],
  ['contract suites', f => f.startsWith('src/testing/')],
  ['helpers', f => /^src\/(store|security|schema)\//.test(f) || ['src/errors.ts', 'src/optional-package.ts', 'src/file-lines.ts'].includes(f)],
  ['domain', f => f.startsWith('src/domain/') || f === 'src/events.ts'],
  ['operations', f => f.startsWith('src/operations/')],
  ['http', f => f.startsWith('src/http/') || ['src/metrics.ts', 'src/client-types.ts', 'src/client-api.ts'].includes(f)],
  [
    'wiring',
    f =>
      ['src/options.ts', 'src/resolve-options.ts', 'src/defaults.ts', 'src/wiring.ts', 'src/internals.ts', 'src/gateway.ts', 'src/account-admin.ts'].includes(
        f,
      ),
  ],
  ['entry points', f => ['src/index.ts', 'src/adapter-kit.ts', 'src/client.ts'].includes(f)],
]
const layerOf = (file: string) => LAYERS.findIndex(([, test]) => test(file))

layers('no import cycle in src/ or adapters/ (type-only imports included)', () => {
  const graph = new Map(files.map(file => [file, [] as string[]]))
  for (const edge of edges) if (edge.target && graph.has(edge.target)) graph.get(edge.from)!.push(edge.target)
  assert.equal(cycles(graph), [])
})

layers('every file of src/ is in a named layer', () => {
  assert.equal(
    files.filter(file => file.startsWith('src/') && layerOf(file) < 0),
    [],
  )
})

layers('no other file of src/ imports the contract suites: src/testing/ is reached through zapgate/testing only', () => {
  const found = edges.filter(edge => edge.from.startsWith('src/') && !edge.from.startsWith('src/testing/') && edge.target?.startsWith('src/testing/')).map(show)
  assert.equal(found, [])
})

layers('every file of src/ imports only from its own layer or a lower one', () => {
  const upward = edges
    .filter(edge => edge.from.startsWith('src/') && edge.target?.startsWith('src/'))
    .filter(edge => layerOf(edge.target!) > layerOf(edge.from))
    .map(edge => `${show(edge)} (${LAYERS[layerOf(edge.from)][0]} -> ${LAYERS[layerOf(edge.target!)][0]})`)
  assert.equal(upward, [])
})

layers("no operation imports cluster code: src/operations/ never reaches src/domain/cluster/ (the router routes a request to its device's holder)", () => {
  const found = edges.filter(edge => edge.from.startsWith('src/operations/') && edge.target?.startsWith('src/domain/cluster/')).map(show)
  assert.equal(found, [])
})

layers('adapters import only public entry points: zapgate, zapgate/adapter-kit, zapgate/testing, zapgate/adapters/*', () => {
  const deep = edges
    .filter(edge => edge.from.startsWith('adapters/'))
    .filter(edge => {
      if (edge.target) return edge.target.split('/')[1] !== edge.from.split('/')[1] // a relative path out of its own folder
      return edge.specifier.startsWith('zapgate') && !/^zapgate(\/adapter-kit|\/testing|\/adapters\/[a-z-]+)?$/.test(edge.specifier)
    })
    .map(show)
  assert.equal(deep, [])
})

layers('src/ imports no adapter package (Baileys, got, Keyv and its drivers) and no adapter', () => {
  const forbidden = /^(@whiskeysockets\/baileys|got|keyv|@keyv\/.*|rate-limiter-flexible)$/
  const found = edges.filter(edge => edge.from.startsWith('src/') && (forbidden.test(edge.specifier) || edge.target?.startsWith('adapters/'))).map(show)
  assert.equal(found, [])
})

layers('source files are at most 300 lines', () => {
  const all = sourceFiles(root, ['src', 'adapters', 'examples', 'bench', 'test'])
  const long = all.map(file => [file, readFileSync(join(root, file), 'utf8').split('\n').length] as const).filter(([, lines]) => lines > 301)
  assert.equal(
    long.map(([file, lines]) => `${file}: ${lines} lines`),
    [],
  )
})

layers.run()
