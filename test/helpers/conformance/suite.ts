import { suite } from 'uvu'
import type { NetworkName, World } from './world.ts'
import { deviceCases } from './devices.ts'
import { sendCases } from './sends.ts'
import { actionCases } from './actions.ts'
import { accountCases } from './account.ts'
import { groupCases } from './groups.ts'
import { webhookCases } from './webhooks.ts'

/** Register one case: its name and its body, run with the suite's world. */
export type Case = (name: string, fn: (world: World) => Promise<void>) => void

/**
 * The cases a network cannot run, by name, with why: each is registered as skipped and printed, never
 * left out silently. Everything else runs on both networks with the same bodies and the same answers.
 */
export const CANNOT: Record<NetworkName, Record<string, string>> = {
  memory: {
    'acks: an error ack from the server (463) becomes a Falha webhook with the code':
      'the simulated network refuses a send at once (its faults) and has no error acks after a server ack, so no message-failed event',
    'last: the peer recorded no problem (nothing it could not decrypt or verify, no refused login) and no iq it does not know':
      'the simulated network keeps no protocol records (no encryption, no iqs)',
  },
  'real-stack': {},
}

/**
 * The conformance suite on one network: operations 3 to 23 (each by its success path and a documented
 * error), the ten webhook kinds and the acks, through HTTP only (the gateway's API, the phone routes,
 * the webhooks). One world for the whole suite: devices are linked once, the cases run in order.
 */
export function conformanceSuite(network: NetworkName, start: () => Promise<World>): void {
  const test = suite<{ world: World }>(
    `conformance on the ${network === 'memory' ? 'simulated network' : 'real Baileys stack against the local WhatsApp peer'}`,
  )
  test.before(async ctx => {
    ctx.world = await start()
  })
  test.after(async ctx => {
    await ctx.world?.close()
  })
  const cannot = CANNOT[network]
  const registered = new Set<string>()
  const register: Case = (name, fn) => {
    registered.add(name)
    const why = cannot[name]
    if (why === undefined) return test(name, ctx => fn(ctx.world))
    console.log(`skipped on ${network}: ${name} (${why})`)
    test.skip(name, ctx => fn(ctx.world))
  }
  for (const cases of [deviceCases, sendCases, actionCases, accountCases, groupCases, webhookCases]) cases(register)
  const unknown = Object.keys(cannot).filter(name => !registered.has(name))
  if (unknown.length > 0) throw new Error(`CANNOT names cases that do not exist: ${unknown.join('; ')}`)
  test.run()
}
