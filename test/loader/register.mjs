// The tests' TypeScript loader, preloaded with `node --conditions=source --import ./test/loader/register.mjs`
// by test/run.mjs and by every process a test starts. It does one thing: strip the types of the
// project's .ts files (esbuild, file by file: `verbatimModuleSyntax` makes that exact) and leave every
// other module to Node. tsx (the loader of `npm start` and the README) also resolves tsconfig paths,
// probes extensions and compiles CommonJS, none of which this code base needs, and its resolve hook
// runs for every module Node loads: on a 2-core machine a process costs about 0.5 s of CPU more
// through tsx (Baileys' module graph: 1.6 s against 1.0 s), and a test run starts about 1,400 of them.
import { register } from 'node:module'

// Stack traces name the lines of the .ts sources (the hooks inline a source map), as under tsx.
process.setSourceMapsEnabled(true)
register('./hooks.mjs', import.meta.url)
