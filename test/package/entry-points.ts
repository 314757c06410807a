import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { API } from 'typescript/unstable/sync'

/** One entry point of the package: how a host imports it and the source file behind it. */
export interface EntryPoint {
  specifier: string
  file: string
}

/** What an entry point exports: the names its module has at run time, and the names only the type checker sees. */
export interface Surface {
  runtime: string[]
  types: string[]
}

/**
 * The entry points package.json "exports" declares, by their "source" condition; a `*` pattern
 * (`./adapters/*`) stands for every folder whose file matches it.
 */
export function entryPoints(root: string): EntryPoint[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; exports: Record<string, { source: string }> }
  return Object.entries(pkg.exports).flatMap(([subpath, conditions]) => {
    const specifier = pkg.name + subpath.slice(1)
    const source = conditions.source.slice(2)
    if (!subpath.includes('*')) return [{ specifier, file: source }]
    const [folder, rest] = source.split('/*')
    return readdirSync(join(root, folder))
      .filter(name => existsSync(join(root, folder, name + rest)))
      .sort()
      .map(name => ({ specifier: specifier.replace('*', name), file: `${folder}/${name}${rest}` }))
  })
}

/**
 * The names each entry's module exports, as the TypeScript compiler resolves them (re-exports and
 * `export *` followed), through the compiler API over the project's tsconfig.json.
 */
export function compiledExports(root: string, entries: EntryPoint[]): Map<string, string[]> {
  const api = new API({ cwd: root })
  try {
    const config = join(root, 'tsconfig.json')
    const project = api.updateSnapshot({ openProjects: [config] }).getProject(config)
    if (!project) throw new Error(`the compiler did not load ${config}`)
    return new Map(
      entries.map(entry => {
        const file = project.program.getSourceFile(join(root, entry.file))
        const module = file && project.checker.getSymbolAtLocation(file)
        if (!module) throw new Error(`the compiler has no module for ${entry.file}`)
        return [
          entry.specifier,
          project.checker
            .getExportsOfModule(module)
            .map(symbol => symbol.name)
            .sort(),
        ]
      }),
    )
  } finally {
    api.close()
  }
}

/** The surface of an entry: its run-time names (by importing it) and the rest of what the compiler sees it export. */
export async function surfaceOf(entry: EntryPoint, compiled: string[]): Promise<Surface> {
  const runtime = Object.keys(await import(entry.specifier)).sort()
  return { runtime, types: compiled.filter(name => !runtime.includes(name)) }
}
