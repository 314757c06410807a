import fc from 'fast-check'
import { suite } from 'uvu'
import {
  assertNoPollution,
  assertSound,
  bodyFor,
  check,
  encodings,
  fuzzWorld,
  paths,
  prototypeSnapshot,
  restoreDevice,
  send,
  SEED,
  sendRaw,
  type FuzzWorld,
} from './harness.ts'

const test = suite<{ world: FuzzWorld; prototypes: string }>(`fuzzing with httpStatus always200 (seed ${SEED})`)

test.before(async ctx => {
  ctx.prototypes = prototypeSnapshot()
  ctx.world = await fuzzWorld({ httpStatus: 'always200' })
})
test.after(ctx => ctx.world.t.stop())

test('any path, any body, any encoding: HTTP 200 with the real status (never 5xx) in a {status, message} body', async ({ world, prototypes }) => {
  const structured = fc.constantFrom(...paths).chain(entry => fc.tuple(fc.constant(entry.path), bodyFor(entry, world), encodings))
  const raw = fc.tuple(
    fc.constantFrom(...paths.map(entry => entry.path)),
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.constantFrom('application/json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/plain'),
  )
  const request = fc.oneof(
    structured.map(value => ({ kind: 'structured' as const, value })),
    raw.map(value => ({ kind: 'raw' as const, value })),
  )
  await check('always200', request, async request => {
    await restoreDevice(world)
    const answer =
      request.kind === 'structured'
        ? await send(world.t.url + request.value[0], request.value[1], request.value[2])
        : await sendRaw(world.t.url + request.value[0], request.value[1], { 'content-type': request.value[2] })
    assertSound(answer, 'always200')
    assertNoPollution(prototypes)
  })
})

test.run()
