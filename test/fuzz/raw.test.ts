import fc from 'fast-check'
import { suite } from 'uvu'
import { assertNoPollution, assertSound, check, fieldsOf, fuzzWorld, operationsOf, paths, prototypeSnapshot, SEED, sendRaw, type FuzzWorld } from './harness.ts'

const test = suite<{ world: FuzzWorld; prototypes: string }>(`fuzzing every path with raw bodies, content types and encodings (seed ${SEED})`)

test.before(async ctx => {
  ctx.prototypes = prototypeSnapshot()
  ctx.world = await fuzzWorld()
})
test.after(ctx => ctx.world.t.stop())

/** Content types a client might send, right, wrong or malformed. */
const contentTypes = fc.constantFrom<string | undefined>(
  undefined,
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json; charset=bogus',
  'application/vnd.api+json',
  'text/json',
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=iso-8859-1',
  'multipart/form-data',
  'multipart/form-data; boundary=zapgate',
  'multipart/form-data; boundary=',
  'text/plain',
  'application/xml',
  'application/octet-stream',
  '*/*',
  ';;',
  'application/json, text/plain',
  'ünïcode/type',
)

const contentEncodings = fc.constantFrom<string | undefined>(
  undefined,
  undefined,
  undefined,
  'gzip',
  'deflate',
  'br',
  'identity',
  'compress',
  'gzip, gzip',
  'bogus',
)

const specialBodies = fc.constantFrom(
  '',
  '{}',
  'null',
  '[]',
  '"texto"',
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '{"a":1}{"b":2}',
  '\ufeff{"a":1}',
  '{"a":"\\ud800"}',
  '{"a":1,"a":{"b":2}}',
  'a=1&a=2&b[c]=d',
  'a[__proto__][polluted]=1',
  '__proto__[polluted]=1&constructor[prototype][polluted]=1',
  'buttons[0][type]=replyButton&buttons[999999999][x]=1',
  `cards${'[0]'.repeat(50)}=x`,
  '%E0%A4%A&%FF=%FE',
  '--zapgate\r\nContent-Disposition: form-data; name="__proto__"\r\n\r\nx\r\n--zapgate--\r\n',
  '--zapgate\r\nContent-Disposition: form-data; name="file"; filename="../../etc/passwd"\r\nContent-Type: image/png\r\n\r\nabc\r\n--zapgate',
  '--zapgate\r\nContent-Disposition: form-data\r\n\r\nnameless\r\n--zapgate--\r\n',
)

/** A valid-looking JSON body of a path's fields, cut or spliced with garbage. */
function mangledJson(): fc.Arbitrary<string> {
  const fields = [...new Set(paths.flatMap(entry => operationsOf(entry).flatMap(fieldsOf)))]
  const body = fc.dictionary(fc.constantFrom(...fields), fc.oneof(fc.string({ maxLength: 20 }), fc.constant('true'), fc.jsonValue({ maxDepth: 2 })), {
    maxKeys: 6,
  })
  return fc.tuple(body, fc.nat(), fc.string({ unit: 'binary', maxLength: 8 }), fc.boolean()).map(([value, at, garbage, cut]) => {
    const text = JSON.stringify(value)
    const index = at % (text.length + 1)
    return cut ? text.slice(0, index) : text.slice(0, index) + garbage + text.slice(index)
  })
}

/** A multipart body of random parts (field names from the table and hostile ones), sometimes unterminated. */
function multipartBody(): fc.Arbitrary<string> {
  const fields = [...new Set(paths.flatMap(entry => operationsOf(entry).flatMap(fieldsOf)))]
  const part = fc.tuple(
    fc.oneof(fc.constantFrom(...fields, '__proto__', 'constructor[prototype][polluted]', 'buttons[0][type]', 'file', ''), fc.string({ maxLength: 10 })),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.option(fc.constantFrom('a.png', '../x', '', 'a"b.pdf'), { nil: undefined }),
  )
  return fc.tuple(fc.array(part, { maxLength: 6 }), fc.boolean()).map(([parts, terminated]) => {
    const body = parts
      .map(
        ([name, value, fileName]) =>
          `--zapgate\r\nContent-Disposition: form-data; name="${name}"${fileName === undefined ? '' : `; filename="${fileName}"`}\r\n\r\n${value}\r\n`,
      )
      .join('')
    return body + (terminated ? '--zapgate--\r\n' : '')
  })
}

const rawBodies = fc.oneof(
  { weight: 3, arbitrary: mangledJson() },
  { weight: 2, arbitrary: specialBodies },
  { weight: 2, arbitrary: multipartBody() },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }) },
)

for (const entry of paths) {
  test(`${entry.path}: malformed bodies, content types and encodings never answer 5xx`, async ({ world, prototypes }) => {
    await check(`${entry.path} raw`, fc.tuple(rawBodies, contentTypes, contentEncodings), async ([body, type, encoding]) => {
      const headers: Record<string, string> = {}
      if (type !== undefined) headers['content-type'] = type
      if (encoding !== undefined) headers['content-encoding'] = encoding
      assertSound(await sendRaw(world.t.url + entry.path, body, headers))
      assertNoPollution(prototypes)
    })
  })
}

test.run()

const pages = suite<{ world: FuzzWorld }>(`fuzzing the token routes (seed ${SEED})`)

pages.before(async ctx => {
  ctx.world = await fuzzWorld()
})
pages.after(ctx => ctx.world.t.stop())

pages('GET /qr/:token, /qr/:token/state, /media/:token and /docs/:asset with any token never answer 5xx', async ({ world }) => {
  const token = fc.oneof(
    fc.string({ maxLength: 80 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.constantFrom('..', '%2e%2e', '..%2f..%2fetc%2fpasswd', '%00', '%', '%E0%A4%A', 'x'.repeat(5000), '__proto__', 'constructor', 'toString'),
  )
  const route = fc.constantFrom('/qr/', '/qr/:state', '/media/', '/docs/')
  await check(
    'token routes',
    fc.tuple(route, token),
    async ([prefix, value]) => {
      const segment = /%/.test(value) ? value : encodeURIComponent(value)
      const path = prefix === '/qr/:state' ? `/qr/${segment}/state` : `${prefix}${segment}`
      const response = await fetch(world.t.url + path)
      await response.arrayBuffer()
      if (response.status >= 500) throw new Error(`GET ${path} answered ${response.status}`)
    },
    300,
  )
})

pages.run()
