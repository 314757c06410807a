import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { exportUses, type ExportUse } from './export-graph.ts'

const root = new URL('../..', import.meta.url).pathname
const exports = suite<{ unused: string[] }>('the exports of src/ and adapters/')

exports.before(context => {
  const unused = (use: ExportUse) => !use.public && use.importers.length === 0
  context.unused = exportUses(root)
    .filter(unused)
    .map(use => use.name)
    .sort()
})

exports('every export of src/ and adapters/ is imported by another file (a test counts) or is part of a public entry point', ({ unused }) => {
  assert.equal(unused, [])
})

exports.run()
