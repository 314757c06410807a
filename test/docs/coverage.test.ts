import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { basename, join, relative } from 'node:path'
import { METRIC_NAMES } from '../../src/metrics.ts'
import { operations } from '../../src/operations/table.ts'
import { readme } from '../helpers/readme.ts'

const root = new URL('../..', import.meta.url).pathname
const docs = suite('docs that cannot rot: examples and README coverage')

docs('every program in examples/ is started by a test (directly, or through a helper a test uses)', () => {
  const files = walk(join(root, 'test')).filter(file => file.endsWith('.ts') && !file.endsWith('coverage.test.ts'))
  const text = new Map(files.map(file => [file, readFileSync(file, 'utf8')]))
  const tests = files.filter(file => file.endsWith('.test.ts'))
  for (const example of readdirSync(join(root, 'examples')).filter(name => name.endsWith('.ts'))) {
    const mentions = files.filter(file => text.get(file)!.includes(`examples/${example}`))
    const started = mentions.some(file => file.endsWith('.test.ts') || tests.some(test => text.get(test)!.includes(`helpers/${basename(file)}`)))
    assert.ok(started, `examples/${example} is started by a test (mentioned in: ${mentions.map(file => relative(root, file)).join(', ') || 'nothing'})`)
  }
})

docs('the README documents every metric, the service routes and options, and the typed exports', () => {
  const text = readme()
  for (const name of METRIC_NAMES) assert.ok(text.includes(`\`${name}\``), `README lists ${name}`)
  for (const route of ['GET /openapi.json', 'GET /docs', 'GET /health', 'GET /metrics']) assert.ok(text.includes(route), `README documents ${route}`)
  for (const option of ['docs', 'metrics', 'healthTimeoutMs']) assert.ok(text.includes(`| \`${option}\` |`), `README's options table has ${option}`)
  for (const variable of ['GATEWAY_METRICS', 'GATEWAY_DOCS']) assert.ok(text.includes(`| \`${variable}\` |`), `README's standalone table has ${variable}`)
  for (const name of ['OperationRequest', 'OperationAnswer', 'SendTextRequest', 'SendTextAnswer']) assert.ok(text.includes(name), `README shows ${name}`)
})

docs('every operation has its named request and answer types', () => {
  const source = readFileSync(join(root, 'src/client-types.ts'), 'utf8')
  for (const name of Object.keys(operations)) {
    const type = name[0].toUpperCase() + name.slice(1)
    assert.ok(source.includes(`export type ${type}Request = OperationRequest<'${name}'>`), `${type}Request`)
    assert.ok(source.includes(`export type ${type}Answer = OperationAnswer<'${name}'>`), `${type}Answer`)
  }
})

docs.run()

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? walk(path) : [path]
  })
}
