import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFile } from 'node:child_process'
import { cpSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { npmEnv } from '../helpers/npm-env.ts'

/**
 * The package as a host installs it: `npm pack` (its prepack builds dist/), then the tarball installed
 * beside koa into an empty project with `--omit=optional`, as an ordinary install (scripts allowed,
 * so "no install scripts" is shown by the tree, not by --ignore-scripts). Prints the package count
 * and size it adds beside koa (README, "Install footprint").
 */

const run = promisify(execFile)
const root = new URL('../..', import.meta.url).pathname
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
  peerDependencies: Record<string, string>
  peerDependenciesMeta: Record<string, { optional?: boolean }>
}
/** Most packages and bytes the gateway may add to a host beside koa (issue 16). */
const MAX_PACKAGES = 115
const MAX_BYTES = 15_000_000

const test = suite<{ dirs: string[] }>('the packed package installed into a host app', { dirs: [] })
test.after(ctx => {
  for (const dir of ctx.dirs) rmSync(dir, { recursive: true, force: true })
})

test('installs beside koa without optional packages or install scripts, within 115 packages and 15 MB, and serves a send', async ctx => {
  const stage = tempDir(ctx.dirs, 'zapgate-stage-')
  const host = tempDir(ctx.dirs, 'zapgate-host-')
  // Packed from a copy, so its build does not race another test building dist/ in the repository.
  for (const name of ['package.json', 'README.md', 'tsconfig.json', 'tsconfig.build.json', 'src', 'adapters'])
    cpSync(join(root, name), join(stage, name), { recursive: true })
  symlinkSync(join(root, 'node_modules'), join(stage, 'node_modules'))
  const [packed] = JSON.parse((await npm(stage, 'pack', '--json', '--pack-destination', host)).stdout) as { filename: string }[]

  writeFileSync(join(host, 'package.json'), JSON.stringify({ name: 'host-app', private: true, type: 'module' }))
  await npm(host, 'install', `koa@${pkg.devDependencies.koa}`, ...INSTALL_FLAGS)
  const koaOnly = measure(host)
  await npm(host, 'install', `./${packed.filename}`, ...INSTALL_FLAGS)
  const withGateway = measure(host)
  const added = { packages: withGateway.packages - koaOnly.packages, bytes: withGateway.bytes - koaOnly.bytes }
  console.log(
    `footprint beside koa: ${added.packages} packages, ${(added.bytes / 1e6).toFixed(1)} MB (koa alone: ${koaOnly.packages} packages, ${(koaOnly.bytes / 1e6).toFixed(1)} MB)`,
  )

  assert.equal(withInstallScripts(join(host, 'node_modules')), [], 'no installed package has an install script')
  for (const name of Object.keys(pkg.peerDependenciesMeta)) assert.not.ok(existsSync(join(host, 'node_modules', name)), `${name} is not installed`)
  assert.ok(added.packages <= MAX_PACKAGES, `${added.packages} packages added`)
  assert.ok(added.bytes <= MAX_BYTES, `${added.bytes} bytes added`)

  const imports = packageImports(join(host, 'node_modules', 'zapgate', 'dist'))
  const optional = Object.keys(pkg.peerDependenciesMeta)
  assert.ok(imports.static.includes('@koa/router') && imports.dynamic.includes('prom-client'), `the scan finds imports: ${JSON.stringify(imports)}`)
  const required = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies).filter(name => !optional.includes(name)), 'zapgate']
  assert.equal(
    imports.static.filter(name => !required.includes(name)),
    [],
    'the library loads only its dependencies and koa up front',
  )
  assert.equal(
    imports.dynamic.filter(name => !required.includes(name) && !optional.includes(name)),
    [],
    'an optional package is loaded only when a feature needs it, and nothing else is (no pino, no dev dependency)',
  )

  cpSync(join(root, 'test/package/fixtures/host-app.mjs'), join(host, 'host-app.mjs'))
  const result = JSON.parse((await run(process.execPath, ['host-app.mjs'], { cwd: host, env: npmEnv() })).stdout)
  assert.is(result.registered, 200)
  assert.is(result.added, 200)
  assert.equal(result.sent, { status: 200, message: 'Mensagem de texto enviada.' })
  assert.equal(result.inbox, [{ from: '5511999990001', type: 'text', text: 'Olá do pacote instalado' }])
  assert.equal(result.openapi, { status: 200, version: '3.1.0' })
  assert.is(result.docs.status, 200)
  assert.match(result.docs.page, 'href="/openapi.json"')
  assert.match(result.docs.page, 'npm install swagger-ui-dist@^5')
  assert.is(result.bundle, 404)
  assert.is(result.metrics, 'The metrics option needs the optional package prom-client, which is not installed: run npm install prom-client@^15')
  assert.match(
    result.defaultTransport,
    'needs the optional package @whiskeysockets/baileys, which is not installed: run npm install @whiskeysockets/baileys@7.0.0-rc14',
  )
  assert.match(result.sqlite, 'npm install @keyv/sqlite')
})

test.run()

// --- Internal helpers ---

/** Quiet, cache-first installs that still reach the registry when the cache lacks a package (CI). */
const INSTALL_FLAGS = ['--omit=optional', '--prefer-offline', '--no-audit', '--no-fund', '--no-update-notifier']

function tempDir(dirs: string[], prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(dir)
  return dir
}

function npm(cwd: string, ...args: string[]) {
  return run('npm', args, { cwd, env: npmEnv(), maxBuffer: 16 * 1024 * 1024 })
}

/** How many packages the project's node_modules holds, and the sum of their file sizes. */
function measure(project: string): { packages: number; bytes: number } {
  const lock = JSON.parse(readFileSync(join(project, 'node_modules', '.package-lock.json'), 'utf8')) as { packages: Record<string, unknown> }
  return { packages: Object.keys(lock.packages).length, bytes: bytesUnder(join(project, 'node_modules')) }
}

function bytesUnder(dir: string): number {
  let total = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) total += bytesUnder(path)
    else total += lstatSync(path).size
  }
  return total
}

/** Every package under `modules` (scoped and nested too) that npm would run an install script of. */
function withInstallScripts(modules: string): string[] {
  const found: string[] = []
  const visit = (dir: string) => {
    if (!existsSync(dir)) return
    for (const name of readdirSync(dir)) {
      if (name.startsWith('.')) continue
      if (name.startsWith('@')) {
        for (const scoped of readdirSync(join(dir, name))) check(join(dir, name, scoped), `${name}/${scoped}`)
      } else check(join(dir, name), name)
    }
  }
  const check = (path: string, name: string) => {
    const manifest = join(path, 'package.json')
    if (!existsSync(manifest)) return
    const { scripts = {}, gypfile } = JSON.parse(readFileSync(manifest, 'utf8')) as { scripts?: Record<string, string>; gypfile?: boolean }
    // npm runs preinstall, install and postinstall, and `node-gyp rebuild` for a binding.gyp without an install script.
    if (scripts.preinstall || scripts.install || scripts.postinstall || gypfile || existsSync(join(path, 'binding.gyp'))) found.push(name)
    visit(join(path, 'node_modules'))
  }
  visit(modules)
  return found
}

/** The packages the built JavaScript imports: statically (loaded with the library) and dynamically (on use). */
function packageImports(dist: string): { static: string[]; dynamic: string[] } {
  const found = { static: new Set<string>(), dynamic: new Set<string>() }
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) visit(path)
      else if (entry.name.endsWith('.js')) {
        const code = readFileSync(path, 'utf8')
          .replace(/\/\*[\s\S]*?\*\//g, '')
          .replace(/^\s*\/\/.*$/gm, '') // comments may quote imports
        for (const [, spec] of code.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]/gm)) add(found.static, spec)
        for (const [, spec] of code.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm)) add(found.static, spec)
        for (const [, spec] of code.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) add(found.dynamic, spec)
      }
    }
  }
  const add = (into: Set<string>, spec: string) => {
    if (spec.startsWith('.') || spec.startsWith('node:') || builtinModules.includes(spec)) return
    into.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0])
  }
  visit(dist)
  return { static: [...found.static].sort(), dynamic: [...found.dynamic].sort() }
}
