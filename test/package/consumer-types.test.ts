import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { tempDir } from '../helpers/standalone.ts'

/**
 * The built package's declaration files as a TypeScript host's compiler reads them: a project that
 * imports `zapgate`, `zapgate/client`, `zapgate/adapter-kit`, `zapgate/testing` and the adapters
 * (fixtures/host-types.ts) type-checks against dist/ with `strict` and `skipLibCheck: false`, so
 * every declaration file it reaches must resolve its own imports through public entry points.
 */

const run = promisify(execFile)
const root = new URL('../..', import.meta.url).pathname
const tsc = join(root, 'node_modules/typescript/bin/tsc')

const test = suite<{ dirs: string[] }>('the built declaration files in a TypeScript host', { dirs: [] })
test.after(ctx => {
  for (const dir of ctx.dirs) rmSync(dir, { recursive: true, force: true })
})

test('a strict host with skipLibCheck off type-checks against dist/, and the answer types are not loosened to any', async ctx => {
  const stage = tempDir('zapgate-types-stage-')
  const host = tempDir('zapgate-types-host-')
  ctx.dirs.push(stage, host)
  // Built from a copy, so the build does not race another test building dist/ in the repository.
  for (const name of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'adapters'])
    cpSync(join(root, name), join(stage, name), { recursive: true })
  symlinkSync(join(root, 'node_modules'), join(stage, 'node_modules'))
  await run(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: stage })

  mkdirSync(join(host, 'node_modules'))
  symlinkSync(stage, join(host, 'node_modules', 'zapgate'))
  for (const name of ['koa', '@types']) symlinkSync(join(root, 'node_modules', name), join(host, 'node_modules', name))
  writeFileSync(join(host, 'package.json'), JSON.stringify({ name: 'typed-host', private: true, type: 'module' }))
  const compilerOptions = {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: ['node'],
  }
  writeFileSync(join(host, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['host-types.ts'] }))
  cpSync(join(root, 'test/package/fixtures/host-types.ts'), join(host, 'host-types.ts'))

  const checked = await run(process.execPath, [tsc, '-p', '.', '--pretty', 'false'], { cwd: host }).then(
    () => '',
    (err: { stdout?: string }) => err.stdout ?? String(err),
  )
  assert.is(checked, '', 'tsc reports no error in the host nor in the declaration files it reaches')
})

test.run()
