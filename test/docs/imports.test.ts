import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'

/**
 * Every `import ... from 'zapgate…'` the docs show names only what that entry of the package exports
 * (package.json `exports`, followed through the source's `export ... from` lines): a reader who copies
 * a snippet gets no "has no exported member". Names written as exported in prose are not checked.
 */

const root = new URL('../..', import.meta.url).pathname
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, { source: string }> }
const DOCS = ['README.md', 'SECURITY.md', ...files('docs', '.md'), ...files('adapters', 'README.md')]
const IMPORT = /import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'(zapgate(?:\/[\w/-]+)?)'/g
const test = suite('the imports the docs show exist')

test('the docs import from the package (the check finds them)', () => {
  assert.ok(imports().length >= 5, JSON.stringify(imports()))
})

for (const { file, names, from } of imports()) {
  test(`${file}: { ${names.join(', ')} } from '${from}'`, () => {
    const exported = exportsOf(entryFile(from))
    for (const name of names) assert.ok(exported.has(name), `'${from}' exports ${name} (it exports ${[...exported].sort().join(', ')})`)
  })
}

test.run()

// --- Internal helpers ---

function imports(): { file: string; names: string[]; from: string }[] {
  return DOCS.flatMap(file =>
    [...readFileSync(join(root, file), 'utf8').matchAll(IMPORT)].map(([, list, from]) => ({
      file,
      names: list!
        .split(',')
        .map(
          name =>
            name
              .trim()
              .replace(/^type\s+/, '')
              .split(/\s+as\s+/)[0]!,
        )
        .filter(Boolean),
      from: from!,
    })),
  )
}

/** The source file of a package entry (`zapgate`, `zapgate/client`, `zapgate/adapters/<name>`). */
function entryFile(specifier: string): string {
  const sub = `.${specifier.slice('zapgate'.length)}`
  const direct = pkg.exports[sub]
  if (direct) return join(root, direct.source)
  const adapter = /^\.\/adapters\/([\w-]+)$/.exec(sub)
  if (adapter) return join(root, pkg.exports['./adapters/*']!.source.replace('*', adapter[1]!))
  throw new Error(`package.json exports no ${specifier}`)
}

/** The names a source file exports: its own declarations and lists, and what its `export * from` files export. */
function exportsOf(file: string, seen = new Set<string>()): Set<string> {
  const names = new Set<string>()
  if (seen.has(file)) return names
  seen.add(file)
  const source = readFileSync(file, 'utf8')
  for (const [, name] of source.matchAll(/^export\s+(?:declare\s+)?(?:async\s+)?(?:function\*?|const|let|class|interface|type|enum)\s+(\w+)/gm))
    names.add(name!)
  for (const [, list] of source.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}/gm))
    for (const item of list!.split(',')) {
      const name = item
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop()
      if (name) names.add(name)
    }
  for (const [, from] of source.matchAll(/^export\s+(?:type\s+)?\*\s+from\s+'([^']+)'/gm))
    for (const name of exportsOf(resolve(dirname(file), from!), seen)) names.add(name)
  return names
}

function files(dir: string, suffix: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter(name => name.endsWith(suffix) && !name.includes('node_modules'))
    .map(name => join(dir, name))
}
