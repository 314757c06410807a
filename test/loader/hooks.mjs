// Load hook of test/loader/register.mjs: a project .ts file becomes its JavaScript (esbuild's
// transform, cached on disk by path and content), anything else goes to Node's own loader.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'

const cache = new URL('../../node_modules/.cache/zapgate-test-loader/', import.meta.url)
mkdirSync(cache, { recursive: true })
/** esbuild, imported at the first file the cache does not hold. */
let esbuild
/** esbuild's transform options but the file's name; part of the cache key with esbuild's version (the cache lives in node_modules/, which `npm ci` empties, but an `npm install` of another esbuild keeps). */
const OPTIONS = {
  loader: 'ts',
  format: 'esm',
  target: 'node20',
  sourcemap: 'inline',
  tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true, target: 'ES2022' } },
}
const ESBUILD_VERSION = JSON.parse(readFileSync(new URL('../../node_modules/esbuild/package.json', import.meta.url), 'utf8')).version
const OPTIONS_KEY = JSON.stringify({ ...OPTIONS, esbuild: ESBUILD_VERSION })

/** Node's load hook: `.ts` under a file: URL is compiled, the rest passes through. */
export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context)
  const path = fileURLToPath(url)
  const source = readFileSync(path, 'utf8')
  const key = createHash('sha1').update(OPTIONS_KEY).update('\0').update(path).update('\0').update(source).digest('hex')
  const cached = new URL(`${key}.js`, cache)
  let code
  try {
    code = readFileSync(cached, 'utf8')
  } catch {
    esbuild ??= await import('esbuild')
    code = esbuild.transformSync(source, { ...OPTIONS, sourcefile: path }).code
    // Written aside, then renamed: processes compiling the same file at once never read half a file.
    const partial = new URL(`${key}.${process.pid}.partial`, cache)
    writeFileSync(partial, code)
    renameSync(partial, cached)
  }
  return { format: 'module', source: code, shortCircuit: true }
}
