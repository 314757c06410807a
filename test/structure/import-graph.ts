import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'

/** One static import (or re-export) of a source file: what it names and whether it is type-only. */
export interface ImportEdge {
  from: string
  specifier: string
  /** The imported file, relative to the root, when the specifier is a relative path. */
  target?: string
  typeOnly: boolean
  line: number
}

/** Every .ts file under `dirs` (relative to `root`), skipping node_modules. */
export function sourceFiles(root: string, dirs: string[]): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir)).flatMap(name => {
      const path = join(dir, name)
      if (name === 'node_modules') return []
      return statSync(join(root, path)).isDirectory() ? walk(path) : path.endsWith('.ts') ? [path] : []
    })
  return dirs.flatMap(walk).sort()
}

/** The static imports and re-exports of `file` (dynamic `import()` calls are not edges of the graph). */
export function importsOf(root: string, file: string): ImportEdge[] {
  const text = readFileSync(join(root, file), 'utf8')
  const edges: ImportEdge[] = []
  const pattern = /^(import|export)\s+(type\s+)?[^;'"]*?\sfrom\s+'([^']+)'|^import\s+'([^']+)'/gms
  for (const match of text.matchAll(pattern)) {
    const specifier = match[3] ?? match[4]
    const line = text.slice(0, match.index).split('\n').length
    const relativePath = specifier.startsWith('.')
    edges.push({
      from: file,
      specifier,
      target: relativePath ? normalize(join(dirname(file), specifier)) : undefined,
      typeOnly: match[2] !== undefined,
      line,
    })
  }
  return edges
}

/** The strongly connected groups of more than one file (import cycles), each sorted. */
export function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0
  const indexOf = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (node: string) => {
    indexOf.set(node, index)
    low.set(node, index++)
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!indexOf.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, indexOf.get(next)!))
    }
    if (low.get(node) === indexOf.get(node)) {
      const group: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        group.push(member)
      } while (member !== node)
      if (group.length > 1) found.push(group.sort())
    }
  }
  for (const node of graph.keys()) if (!indexOf.has(node)) visit(node)
  return found
}

/** The path of `file` relative to `root`, with forward slashes. */
export function rel(root: string, file: string): string {
  return relative(root, file).split('\\').join('/')
}
