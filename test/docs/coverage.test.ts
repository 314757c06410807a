import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { basename, join, relative } from 'node:path'
import { METRIC_NAMES } from '../../src/metrics.ts'
import { operations } from '../../src/operations/table.ts'
import { apiReference, readme } from '../helpers/readme.ts'

const root = new URL('../..', import.meta.url).pathname
const docs = suite('docs that cannot rot: examples and README coverage')

docs('every program in examples/ is started by a test (directly, or through a helper a test uses)', () => {
  const files = walk(join(root, 'test')).filter(file => file.endsWith('.ts') && !file.endsWith('coverage.test.ts'))
  const text = new Map(files.map(file => [file, readFileSync(file, 'utf8')]))
  const tests = files.filter(file => file.endsWith('.test.ts'))
  // Helpers the tests use: imported by a test, or by a helper in use (`./<name>` from a helper).
  const helpers = files.filter(file => file.includes('/helpers/'))
  const used = new Set(helpers.filter(helper => tests.some(test => text.get(test)!.includes(`helpers/${basename(helper)}`))))
  for (let grew = true; grew;) {
    grew = false
    for (const helper of helpers) {
      if (used.has(helper) || ![...used].some(user => text.get(user)!.includes(`./${basename(helper)}`))) continue
      used.add(helper)
      grew = true
    }
  }
  for (const example of readdirSync(join(root, 'examples')).filter(name => name.endsWith('.ts'))) {
    const mentions = files.filter(file => text.get(file)!.includes(`examples/${example}`))
    const started = mentions.some(file => file.endsWith('.test.ts') || used.has(file))
    assert.ok(started, `examples/${example} is started by a test (mentioned in: ${mentions.map(file => relative(root, file)).join(', ') || 'nothing'})`)
  }
})

docs('the README and the API reference document every metric, the service routes, the options, the variables and the typed exports', () => {
  const guide = readme()
  const reference = apiReference()
  for (const name of METRIC_NAMES) assert.ok(reference.includes(`\`${name}\``), `docs/api.md lists ${name}`)
  for (const route of ['GET /openapi.json', 'GET /docs', 'GET /health', 'GET /metrics']) assert.ok(reference.includes(route), `docs/api.md documents ${route}`)
  for (const option of ['docs', 'metrics', 'healthTimeoutMs']) assert.ok(guide.includes(`| \`${option}\` |`), `README's options table has ${option}`)
  const standalone = readFileSync(join(root, 'examples/standalone.ts'), 'utf8')
  const variables = new Set([...standalone.matchAll(/env\.((?:GATEWAY_|LOG_)[A-Z_]+|PORT)\b/g)].map(match => match[1]))
  assert.ok(variables.size >= 10, 'the variables the standalone server reads are found')
  // README.md is at its size cap: a variable of one limit may be documented in docs/limits.md's column of variables instead.
  const limits = readFileSync(join(root, 'docs/limits.md'), 'utf8')
  for (const variable of variables)
    assert.ok(
      new RegExp(`^\\| [^|]*\`${variable}\``, 'm').test(guide) || new RegExp(`^\\|(?:[^|]*\\|){3} \`${variable}\``, 'm').test(limits),
      `README's standalone table or docs/limits.md's variable column has ${variable}`,
    )
  for (const name of ['OperationRequest', 'OperationAnswer', 'SendTextRequest', 'SendTextAnswer'])
    assert.ok(reference.includes(name), `docs/api.md shows ${name}`)
})

docs('the README is a guide of at most 25 KB; the reference, decisions, security and benchmarks live beside it', () => {
  assert.ok(Buffer.byteLength(readme()) <= 25 * 1024, `README.md is ${Buffer.byteLength(readme())} bytes`)
  for (const file of ['docs/api.md', 'docs/decisions.md', 'SECURITY.md', 'bench/README.md']) assert.ok(readme().includes(`(${file}`), `README links ${file}`)
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
