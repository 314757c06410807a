import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import PQueue from 'p-queue'
import type { WebhookResponse } from 'zapgate'
import { httpWebhookSender } from '../../adapters/webhook-http/index.ts'
import { FairLanes } from '../../adapters/webhook-http/fair-lanes.ts'
import { startGatedReceiver, type GatedReceiver } from './webhook-http-gated-receiver.ts'

/**
 * Devices whose receiver paths on one shared host hang (a gated receiver holds them), through the
 * default sender (8 per host, 4 per device) with a 1 s time-out.
 */
type Ctx = { receiver: GatedReceiver; sender: ReturnType<typeof httpWebhookSender> }
const test = suite<Ctx>('adapters/webhook-http: devices whose receivers hang on a shared host')

test.before.each(async ctx => {
  ctx.receiver = await startGatedReceiver()
  ctx.sender = httpWebhookSender({ allowPrivateUrls: true, timeoutMs: 1_000 })
})
test.after.each(async ctx => {
  await ctx.sender.close!()
  await ctx.receiver.stop()
})

/** `count` deliveries of `deviceId` to `path`, sent at once; settles with each one's outcome. */
function sendMany({ sender, receiver }: Ctx, deviceId: string, path: string, count: number): Promise<PromiseSettledResult<WebhookResponse>[]> {
  const sends = Array.from({ length: count }, (_, i) =>
    sender.send({ url: `${receiver.origin}${path}`, body: JSON.stringify({ deviceId, i }), headers: {}, deviceId }),
  )
  return Promise.allSettled(sends)
}

const failures = (results: PromiseSettledResult<unknown>[]) =>
  results.flatMap(result => (result.status === 'rejected' ? [(result.reason as Error).message] : []))

test("two devices with hung receivers do not hold all of the host's slots: a third device's deliveries get through within the time-out", async ctx => {
  const { receiver } = ctx
  receiver.hold('/a')
  receiver.hold('/b')
  // Their first attempts go out 4 each (8 slots) and time out unanswered.
  const first = await Promise.all([sendMany(ctx, 'a', '/a', 4), sendMany(ctx, 'b', '/b', 4)])
  assert.is(failures(first.flat()).length, 8, 'the first attempts of the hung devices got no answer')
  assert.is(receiver.to('/a').length + receiver.to('/b').length, 8, 'they went out')

  // Their retries come first, then the third device's deliveries.
  const retries = [sendMany(ctx, 'a', '/a', 4), sendMany(ctx, 'b', '/b', 4)]
  const third = await sendMany(ctx, 'c', '/c', 4)
  assert.equal(failures(third), [], "the third device's deliveries did not wait out their time-out behind the hung ones")
  assert.equal(
    third.map(result => result.status === 'fulfilled' && result.value.status),
    [200, 200, 200, 200],
  )
  assert.equal(
    receiver.to('/c').map(hook => JSON.parse(hook.body)),
    [0, 1, 2, 3].map(i => ({ deviceId: 'c', i })),
    'each reached the receiver once',
  )
  assert.is(receiver.answered('/a') + receiver.answered('/b'), 0, 'the other two hung all along')
  await Promise.all(retries)
})

test('a narrowed device goes back to its full width once its receiver answers again', async ctx => {
  const { receiver } = ctx
  receiver.hold('/a')
  assert.is(failures(await sendMany(ctx, 'a', '/a', 4)).length, 4, 'no answer: narrowed')
  assert.is(receiver.to('/a').length, 4)
  receiver.release('/a')
  const [answered] = await sendMany(ctx, 'a', '/a', 1)
  assert.is(answered.status === 'fulfilled' && answered.value.status, 200, 'the receiver answers again')

  receiver.hold('/a')
  assert.is(failures(await sendMany(ctx, 'a', '/a', 4)).length, 4)
  assert.is(receiver.to('/a').length, 4 + 1 + 4, 'all four went out at once again, none dropped unsent behind a narrowed line')
})

const tick = () => new Promise(resolve => setImmediate(resolve))

test('FairLanes: a narrowed device runs one job at a time on that host, also in a line made again after it ran idle, until widened', async () => {
  const lanes = new FairLanes(PQueue, { perDevice: 2, perHost: 4, overall: 10, maxWaitingPerHost: 100 })
  const running = new Set<string>()
  const releases = new Map<string, () => void>()
  const job = (name: string) => () =>
    new Promise<void>(resolve => {
      running.add(name)
      releases.set(name, () => (running.delete(name), resolve()))
    })
  lanes.narrow('h', 'a')
  await tick()
  assert.equal(lanes.size, { hosts: 0, lines: 0 }, 'narrowing keeps no line')
  const done = ['a1', 'a2', 'a3'].map(name => lanes.run('h', 'a', job(name)))
  done.push(lanes.run('h', 'b', job('b1')), lanes.run('h', 'b', job('b2')), lanes.run('other', 'a', job('o1')), lanes.run('other', 'a', job('o2')))
  await tick()
  assert.equal([...running].sort(), ['a1', 'b1', 'b2', 'o1', 'o2'], 'a runs one job on h; b on h and a on another host keep their width')
  lanes.widen('h', 'a')
  await tick()
  assert.equal([...running].sort(), ['a1', 'a2', 'b1', 'b2', 'o1', 'o2'])
  for (const name of ['a1', 'a2', 'b1', 'b2', 'o1', 'o2']) releases.get(name)!()
  await tick()
  releases.get('a3')!()
  await Promise.all(done)
  assert.equal(lanes.size, { hosts: 0, lines: 0 })
})

test.run()
