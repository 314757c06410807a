import { readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { API, SymbolFlags, type Project, type Symbol } from 'typescript/unstable/sync'
import { SyntaxKind, type Node, type SourceFile } from 'typescript/unstable/ast'
import { entryPoints } from '../package/entry-points.ts'

/** An export of a file of src/ or adapters/, and the files that import it (by any path: directly, re-exported, through an entry point). */
export interface ExportUse {
  /** `file:name`, the file that declares the export. */
  name: string
  importers: string[]
  /** Whether an entry point of the package exports it. */
  public: boolean
}

/**
 * Every export declared in src/ and adapters/, with the files that import it, as the TypeScript
 * compiler resolves the imports (aliases and re-exports followed to the declaration). A namespace
 * import or a dynamic `import()` of a module counts as an import of all its exports.
 */
export function exportUses(root: string): ExportUse[] {
  const api = new API({ cwd: root })
  try {
    const config = join(root, 'tsconfig.json')
    const project = api.updateSnapshot({ openProjects: [config] }).getProject(config)
    if (!project) throw new Error(`the compiler did not load ${config}`)
    return collect(root, project)
  } finally {
    api.close()
  }
}

// --- Internal helpers ---

function collect(root: string, project: Project): ExportUse[] {
  const { checker, program } = project
  const relPath = (path: string) => relative(root, path).split('\\').join('/')
  const files = program
    .getSourceFileNames()
    .map(relPath)
    .filter(file => /^(src|adapters|test|examples|bench)\//.test(file) && !file.endsWith('.d.ts'))
  const moduleOf = (file: string) => {
    const source = program.getSourceFile(join(root, file))
    return source && checker.getSymbolAtLocation(source)
  }
  const keyOf = (symbol: Symbol) => {
    const target = symbol.flags & SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
    const declared = target.declarations[0]
    return declared ? `${relPath(declared.path)}:${target.name}` : undefined
  }

  const declared = new Map<string, ExportUse>()
  for (const file of files.filter(f => /^(src|adapters)\//.test(f))) {
    const module = moduleOf(file)
    for (const symbol of module ? checker.getExportsOfModule(module) : []) {
      const key = keyOf(symbol)
      if (key?.startsWith(`${file}:`)) declared.set(key, { name: key, importers: [], public: false })
    }
  }
  const use = (key: string | undefined, importer: string) => {
    const entry = key && declared.get(key)
    if (entry && !key.startsWith(`${importer}:`) && !entry.importers.includes(importer)) entry.importers.push(importer)
  }
  const useAll = (file: string, importer: string) => {
    const module = moduleOf(file)
    for (const symbol of module ? checker.getExportsOfModule(module) : []) use(keyOf(symbol), importer)
  }
  const entries = new Map(entryPoints(root).map(entry => [entry.specifier, entry.file]))
  for (const [, file] of entries) {
    const module = moduleOf(file)
    for (const symbol of module ? checker.getExportsOfModule(module) : []) {
      const entry = declared.get(keyOf(symbol) ?? '')
      if (entry) entry.public = true
    }
  }

  for (const file of files) {
    const source = program.getSourceFile(join(root, file))!
    for (const binding of bindingsOf(source)) use(keyOf(checker.getSymbolAtLocation(binding) ?? missing(file)), file)
    for (const whole of wholeModules(source)) {
      const target = entries.get(whole) ?? (whole.startsWith('.') ? normalize(join(dirname(file), whole)) : undefined)
      if (target) useAll(target, file)
    }
  }
  return [...declared.values()].map(entry => ({ ...entry, importers: entry.importers.sort() }))
}

/** The names bound by the file's static imports and named re-exports (each resolves to what it imports). */
function bindingsOf(source: SourceFile): Node[] {
  const names: Node[] = []
  for (const statement of source.statements as unknown as StatementLike[]) {
    if (statement.kind === SyntaxKind.ImportDeclaration) {
      const clause = statement.importClause
      if (clause?.name) names.push(clause.name)
      for (const element of clause?.namedBindings?.elements ?? []) names.push(element.name)
    } else if (statement.kind === SyntaxKind.ExportDeclaration && statement.moduleSpecifier) {
      for (const element of statement.exportClause?.elements ?? []) names.push(element.name)
    }
  }
  return names
}

/** Specifiers of modules a file takes whole: `import * as`, and dynamic `import('...')` (read from the text). */
function wholeModules(source: SourceFile): string[] {
  const specifiers: string[] = []
  for (const statement of source.statements as unknown as StatementLike[]) {
    const bindings = statement.importClause?.namedBindings
    if (statement.kind === SyntaxKind.ImportDeclaration && bindings?.kind === SyntaxKind.NamespaceImport) specifiers.push(statement.moduleSpecifier!.text)
  }
  for (const match of readFileSync(source.fileName, 'utf8').matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)) specifiers.push(match[1])
  return specifiers
}

function missing(file: string): never {
  throw new Error(`the compiler resolved no symbol for an import of ${file}`)
}

/** The parts of import and export declarations read here. */
interface StatementLike {
  kind: SyntaxKind
  moduleSpecifier?: { text: string }
  importClause?: { name?: Node; namedBindings?: { kind: SyntaxKind; elements?: { name: Node }[] } }
  exportClause?: { elements?: { name: Node }[] }
}
