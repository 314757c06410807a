import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { runInNewContext } from 'node:vm'
import { DEFAULTS } from '../../src/options.ts'

/**
 * The defaults the docs state are the code's: README's options table (its code values read as
 * JavaScript, a list of durations as ms) and docs/limits.md's default column (`20 MB`, `30 s`,
 * `3000 per 60 s`) against DEFAULTS of src/options.ts; README's standalone table against the
 * option each variable sets; every option of GatewayOptions is named in README; every GATEWAY_*
 * variable the docs name is one an example reads. Rows whose default is prose ("none", "random per
 * process") are not checked.
 */

const root = new URL('../..', import.meta.url).pathname
const read = (file: string) => readFileSync(join(root, file), 'utf8')
const README = read('README.md')
const LIMITS = read('docs/limits.md')
const test = suite('docs: the defaults they state are the code defaults')

const MB = 1024 ** 2
const UNITS: Record<string, number> = { ms: 1, s: 1000, min: 60_000, h: 3_600_000, MB, mb: MB, MiB: MB }

test("README's options table: every default written as code is DEFAULTS'", () => {
  const rows = tableRows(README, '| option | default | meaning |')
  let checked = 0
  for (const [optionCell, defaultCell] of rows) {
    const name = codeSpans(optionCell)[0]!
    const expected = defaultOf(name)
    const code = /^`([^`]+)`/.exec(defaultCell.trim())?.[1]
    if (expected === undefined || code === undefined) continue
    assert.equal(codeValue(code), JSON.parse(JSON.stringify(expected)), `README: \`${name}\` default ${code}`)
    checked++
  }
  assert.ok(checked >= 25, `the table's defaults are found (${checked})`)
})

test("docs/limits.md: every default of a limit with an option is the option's default", () => {
  let checked = 0
  for (const table of ['| limit | default | option | variable (standalone) | past it |', '| limit | option | default | counted per | past it |']) {
    const header = table.split('|').map(cell => cell.trim())
    const [optionAt, defaultAt] = [header.indexOf('option') - 1, header.indexOf('default') - 1]
    for (const cells of tableRows(LIMITS, table)) {
      const options = codeSpans(cells[optionAt]!).filter(name => defaultOf(name) !== undefined)
      const defaults = cells[defaultAt]!.split(';')
      if (options.length === 0 || (defaults.length !== options.length && defaults.length !== 1)) continue
      options.forEach((name, i) => {
        const text = defaults[defaults.length === 1 ? 0 : i]!
        const expected = defaultOf(name)
        const stated = quantity(text)
        if (stated === undefined) return
        assert.equal(stated, comparable(expected), `docs/limits.md: \`${name}\` default "${text.trim()}"`)
        checked++
      })
    }
  }
  assert.ok(checked >= 20, `the limits' defaults are found (${checked})`)
})

/** What each variable of the standalone server sets, as README's table states its default. */
const VARIABLE_DEFAULTS: Record<string, string> = {
  GATEWAY_HTTP_STATUS: DEFAULTS.httpStatus,
  GATEWAY_TIME_ZONE: DEFAULTS.timeZone,
  GATEWAY_LEASE_TTL_MS: String(DEFAULTS.instances.ttlMs),
  GATEWAY_MIN_INTERVAL_MS: String(DEFAULTS.messaging.minIntervalMs),
  GATEWAY_INTERVAL_JITTER_MS: String(DEFAULTS.messaging.intervalJitterMs),
  GATEWAY_BODY_TIMEOUT_MS: String(DEFAULTS.bodyTimeoutMs),
  GATEWAY_MEDIA_BUDGET_MB: String(comparable(DEFAULTS.mediaBytesInFlight) / MB),
  GATEWAY_SHUTDOWN_GRACE_MS: String(DEFAULTS.shutdownGraceMs),
  GATEWAY_RATE_LIMIT: `${DEFAULTS.rateLimit.perAccount.points}/${DEFAULTS.rateLimit.perAccount.duration}`,
}

test("README's standalone table: a variable's default is the default of the option it sets", () => {
  const rows = tableRows(README, '| variable | default | meaning |')
  const seen = new Set<string>()
  for (const [variableCell, defaultCell] of rows) {
    const variables = codeSpans(variableCell)
    const defaults = defaultCell.split(';').map(text => text.trim().replace(/^`|`$/g, ''))
    variables.forEach((variable, i) => {
      if (!(variable in VARIABLE_DEFAULTS)) return
      seen.add(variable)
      const stated = defaults.length === variables.length ? defaults[i] : defaults[0]
      assert.is(stated, VARIABLE_DEFAULTS[variable], `README: ${variable} default`)
    })
  }
  assert.equal([...seen].sort(), Object.keys(VARIABLE_DEFAULTS).sort(), "README's standalone table has each variable")
})

test('README names every option of GatewayOptions (its table, or the "Also:" line)', () => {
  const source = read('src/options.ts')
  const body = source.slice(source.indexOf('export interface GatewayOptions {'), source.indexOf('\n}\n', source.indexOf('export interface GatewayOptions {')))
  const options = [...body.matchAll(/^ {2}(\w+)\?:/gm)].map(match => match[1]!)
  assert.ok(options.length >= 40, `the options are found (${options.length})`)
  const also = README.slice(README.indexOf('\nAlso: '), README.indexOf('\n\n', README.indexOf('\nAlso: ') + 1))
  const named = new Set([...tableRows(README, '| option | default | meaning |').map(([cell]) => codeSpans(cell)[0]), ...codeSpans(also)])
  assert.equal(
    options.filter(option => !named.has(option)),
    [],
    'options of src/options.ts that README does not name',
  )
})

test('every GATEWAY_* variable the docs name is read by an example', () => {
  const docs = ['README.md', 'SECURITY.md', ...files('docs', '.md'), ...files('adapters', 'README.md')]
  const examples = files('examples', '.ts').map(read).join('\n')
  const named = new Set(docs.flatMap(file => [...read(file).matchAll(/\bGATEWAY_[A-Z_]*[A-Z]\b/g)].map(match => match[0])))
  assert.ok(named.size >= 25, `the variables are found (${named.size})`)
  const unread = [...named].filter(variable => !new RegExp(`env\\.${variable}\\b|'${variable}'`).test(examples))
  assert.equal(unread, [], 'variables named in the docs that no example reads')
})

test.run()

// --- Internal helpers ---

/** The cells (without the outer pipes) of each row of the markdown table whose header line is `header`. */
function tableRows(markdown: string, header: string): string[][] {
  const start = markdown.indexOf(`\n${header}\n`)
  assert.ok(start >= 0, `a table headed ${header}`)
  const lines = markdown.slice(start + header.length + 2).split('\n')
  const rows: string[][] = []
  for (const line of lines.slice(1)) {
    if (!line.startsWith('|')) break
    rows.push(line.slice(1, -1).split(/(?<!\\)\|/))
  }
  return rows
}

/** The code spans of a cell, in order. */
function codeSpans(text: string): string[] {
  return [...text.matchAll(/`([^`]+)`/g)].map(match => match[1]!)
}

/** DEFAULTS' value of an option (`bodyLimit`, `scheduleQuota.maxBytes`, `rateLimit.perAccount`), undefined for one without. */
function defaultOf(name: string): unknown {
  const walk = (from: unknown) =>
    name.split('.').reduce<unknown>((value, key) => (value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined), from)
  return walk(DEFAULTS) ?? walk(DEFAULTS.messaging)
}

/** A default written as code in README: a JavaScript value, or a list of durations (`[5 s, 5 min]`) in ms. */
function codeValue(code: string): unknown {
  const durations = /^\[(.*)\]$/.exec(code)?.[1]?.split(',')
  if (durations?.every(item => /^\s*\d+\s*(s|min|h)\s*$/.test(item))) return durations.map(item => quantity(item))
  return JSON.parse(JSON.stringify(runInNewContext(`(${code})`))) // a value of this realm
}

/** A default as docs/limits.md writes it: `20 MB` (bytes), `30 s` (ms), `10 000`, or `3000 per 60 s` (a rule). */
function quantity(text: string): number | { points: number; duration: number } | undefined {
  const rule = /(\d+) per (\d+) s\b/.exec(text)
  if (rule) return { points: Number(rule[1]), duration: Number(rule[2]) }
  const match = /(\d{1,3}(?:[ ,]\d{3})+|\d+)\s*(ms|s|min|h|MB|MiB)?(?!\w)/.exec(text)
  if (!match) return undefined
  return Number(match[1]!.replace(/[ ,]/g, '')) * (match[2] ? UNITS[match[2]]! : 1)
}

/** A DEFAULTS value as quantity() reads the docs: sizes with a unit (`'20mb'`) in bytes. */
function comparable(value: unknown): number {
  if (typeof value === 'string' && /^\d+mb$/.test(value)) return parseInt(value) * MB
  return value as number
}

function files(dir: string, suffix: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter(name => name.endsWith(suffix) && !name.includes('node_modules'))
    .map(name => join(dir, name))
}
