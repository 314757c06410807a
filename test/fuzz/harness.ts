import assert from 'node:assert/strict'
import fc from 'fast-check'
import { operationTable } from '../../src/operations/table.ts'
import { distinguishingFields, operationsOf, type Operation, type PathEntry } from '../../src/operations/operation.ts'
import type { Answer } from '../helpers/http.ts'
import { hostileValue, plausibleValue } from './values.ts'
import type { FuzzWorld } from './world.ts'

/**
 * Property-based fuzzing of the HTTP edge. The field lists come from the operation table's schemas,
 * so a new operation (or a new field) is fuzzed without touching this file. Values mix plausible
 * ones (so that requests get past authentication into the handlers) with hostile ones.
 */

/** Runs per property: FUZZ_RUNS overrides (CI uses the default). */
export const RUNS = Number(process.env.FUZZ_RUNS ?? 500)

/** The seed of this process's properties: FUZZ_SEED replays a failure. */
export const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31)

/** Every field an operation reads: its schema's fields and its distinguishing fields. */
export function fieldsOf(operation: Operation): string[] {
  const shape = (operation.schema as { schema?: unknown }).schema
  const fields = shape && typeof shape === 'object' ? Object.keys(shape) : []
  return [...new Set([...fields, ...distinguishingFields(operation)])]
}

export { operationsOf }

export { send, sendRaw } from './wire.ts'

export { fuzzWorld, restoreDevice, type FuzzWorld } from './world.ts'

/** The paths of the operation table. */
export const paths: readonly PathEntry[] = operationTable

/** One body for a path: the fields of one of its operations, each plausible, hostile or absent, plus extra keys. */
export function bodyFor(entry: PathEntry, world: FuzzWorld): fc.Arbitrary<Record<string, unknown>> {
  const operations = operationsOf(entry)
  const allFields = [...new Set(operations.flatMap(fieldsOf))]
  return fc
    .constantFrom(...operations)
    .chain(operation => {
      const fields = fieldsOf(operation)
      const entries = fields.map(field =>
        fc.oneof(
          { weight: 6, arbitrary: plausibleValue(field, world).map(value => [field, value] as const) },
          { weight: 2, arbitrary: hostileValue().map(value => [field, value] as const) },
          { weight: 1, arbitrary: fc.constant(undefined) },
        ),
      )
      const extras = fc.array(
        fc.tuple(
          fc.oneof(fc.constantFrom(...allFields, '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'), fc.string({ maxLength: 12 })),
          hostileValue(),
        ),
        { maxLength: 3 },
      )
      return fc.tuple(fc.tuple(...entries), extras)
    })
    .map(([entries, extras]) => {
      const body: Record<string, unknown> = {}
      for (const entry of entries) if (entry) defineField(body, entry[0], entry[1])
      for (const [key, value] of extras) defineField(body, key, value)
      return body
    })
}

/** How a body travels: JSON, urlencoded or multipart. */
export const encodings = fc.constantFrom('json', 'json', 'json', 'form', 'multipart') as fc.Arbitrary<'json' | 'form' | 'multipart'>

/**
 * The properties every answer must have: never 5xx, a JSON `{status: number, message: string}` body
 * whose status is the HTTP code (mirror mode) or HTTP 200 (always200 mode).
 */
export function assertSound(answer: Answer, mode: 'mirror' | 'always200' = 'mirror'): void {
  assert.ok(answer.body && typeof answer.body === 'object', `not a JSON object: HTTP ${answer.status} ${answer.text.slice(0, 200)}`)
  assert.equal(typeof answer.body.status, 'number', answer.text.slice(0, 200))
  assert.equal(typeof answer.body.message, 'string', answer.text.slice(0, 200))
  assert.ok(answer.body.status < 500, `answered ${answer.body.status}: ${answer.text.slice(0, 300)}`)
  assert.equal(answer.status, mode === 'mirror' ? answer.body.status : 200, `HTTP ${answer.status} for body status ${answer.body.status}`)
}

/** The own property names of the built-in prototypes, to detect prototype pollution. */
export function prototypeSnapshot(): string {
  return JSON.stringify([Object.prototype, Array.prototype, Function.prototype, String.prototype].map(p => Object.getOwnPropertyNames(p).sort()))
}

/** Assert no built-in prototype gained or lost a property, and a fresh object has no stray ones. */
export function assertNoPollution(before: string): void {
  assert.equal(prototypeSnapshot(), before, 'a built-in prototype changed')
  const probe: Record<string, unknown> = {}
  for (const key of ['polluted', 'status', 'message', 'authkey', 'isAdmin', 'checkDispositivo'])
    assert.equal(probe[key], undefined, `Object.prototype.${key} is set`)
}

/** Run a property with the harness's seed, printing the seed (and how to replay it) on failure. */
export async function check<T>(name: string, arbitrary: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, runs = RUNS): Promise<void> {
  try {
    await fc.assert(fc.asyncProperty(arbitrary, predicate), { numRuns: runs, seed: SEED, endOnFailure: true, includeErrorInReport: true })
  } catch (err) {
    console.error(`fuzz property "${name}" failed with seed ${SEED}; replay with FUZZ_SEED=${SEED}`)
    throw err
  }
}

// --- Internal helpers ---

/** Set an own property, even one named `__proto__` (a plain assignment would change the prototype). */
function defineField(body: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(body, key, { value, enumerable: true, writable: true, configurable: true })
}
