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
  type FuzzWorld,
} from './harness.ts'

const test = suite<{ world: FuzzWorld; prototypes: string }>(`fuzzing every path with bodies built from the operation table (seed ${SEED})`)

test.before(async ctx => {
  ctx.prototypes = prototypeSnapshot()
  ctx.world = await fuzzWorld()
})
test.after(ctx => ctx.world.t.stop())

for (const entry of paths) {
  test(`${entry.path}: plausible, hostile and missing fields in any encoding never answer 5xx and never pollute a prototype`, async ({ world, prototypes }) => {
    await check(entry.path, fc.tuple(bodyFor(entry, world), encodings), async ([body, encoding]) => {
      await restoreDevice(world)
      assertSound(await send(world.t.url + entry.path, body, encoding))
      assertNoPollution(prototypes)
    })
  })
}

test.run()
