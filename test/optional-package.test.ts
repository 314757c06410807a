import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { importOptional, isInstalled, MissingPackageError, requireInstalled } from '../src/optional-package.ts'

const test = suite('optional peer packages')

test('importOptional of a package that is not installed fails naming the package and the install command', async () => {
  const err = await importOptional('zapgate-no-such-package', 'The frobnicate option', () => import('zapgate-no-such-package' as string), '^2').catch(e => e)
  assert.instance(err, MissingPackageError)
  assert.is(
    err.message,
    'The frobnicate option needs the optional package zapgate-no-such-package, which is not installed: run npm install zapgate-no-such-package@^2',
  )
  assert.is(err.packageName, 'zapgate-no-such-package')
  assert.is(err.install, 'npm install zapgate-no-such-package@^2')
  assert.is(err.cause.code, 'ERR_MODULE_NOT_FOUND')
})

test('importOptional returns an installed package, and passes on any other failure as it is', async () => {
  const { string } = await importOptional('superstruct', 'validation', () => import('superstruct'))
  assert.type(string, 'function')
  const inside = Object.assign(new Error("Cannot find package 'left-pad' imported from superstruct"), { code: 'ERR_MODULE_NOT_FOUND' })
  const err = await importOptional('superstruct', 'validation', () => Promise.reject(inside)).catch(e => e)
  assert.is(err, inside, 'a dependency missing inside an installed package is not reported as the package missing')
})

test('requireInstalled checks without loading: passes for an installed package, throws naming a missing one', () => {
  assert.ok(isInstalled('superstruct'))
  assert.not.ok(isInstalled('zapgate-no-such-package'))
  requireInstalled('superstruct', 'validation')
  assert.throws(
    () => requireInstalled('zapgate-no-such-package', 'The docs page', { range: '^5' }),
    /The docs page needs the optional package zapgate-no-such-package, which is not installed: run npm install zapgate-no-such-package@\^5/,
  )
  assert.not.ok(
    isInstalled('superstruct', () => {
      throw new Error('not from here')
    }),
    'the caller decides where to resolve from',
  )
})

test.run()
