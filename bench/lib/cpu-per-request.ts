import { cpuMicros, eventLoopSleeps, type ServerProcess } from './process.ts'
import type { LoadResult } from './load.ts'

/** A load run with the CPU the gateways (summed over every instance of the side, idle CPU taken out: cpuIdle) and the simulator used per answered request, and each instance's event-loop sleeps per answered request (`sleepsEach`). */
export type Measured = LoadResult & { cpuGateways: number; cpuSim: number; cpuIdle: number; cpuEach: number[]; sleepsEach: number[] }

/**
 * Wrap a load run so that it also measures CPU per answered request, from /proc: every instance's
 * user + system time (`cpuMicros` of each pid), summed, over the answers, less what the instances
 * spend idle (heartbeats, timers, about 10 to 15 ms a second each here), measured over IDLE_MS with
 * no load right before the run (after SETTLE_MS, while the last run's garbage is collected). On a machine this loaded a run answers few requests a second, and
 * the idle CPU of 3 instances against 1 would weigh as much as the requests (on separate machines
 * at thousands a second it is nothing). The simulator's CPU (the network's side) is kept apart.
 */
export function measuredCpu(sim: ServerProcess, instances: ServerProcess[], run: (seconds: number) => Promise<LoadResult>) {
  const cpu = () => {
    const each = instances.map(i => cpuMicros(i.child.pid))
    return {
      each,
      sleeps: instances.map(i => eventLoopSleeps(i.child.pid)),
      gateways: each.reduce((sum, c) => sum + c, 0),
      sim: cpuMicros(sim.child.pid),
      at: performance.now(),
    }
  }
  return async (seconds: number): Promise<Measured> => {
    // The first second after a run still collects its garbage: not idle CPU, so not measured as such.
    await new Promise(resolve => setTimeout(resolve, SETTLE_MS))
    const quiet = cpu()
    await new Promise(resolve => setTimeout(resolve, IDLE_MS))
    const before = cpu()
    const idlePerMs = (before.gateways - quiet.gateways) / (before.at - quiet.at)
    const result = await run(seconds)
    const after = cpu()
    const idle = idlePerMs * (after.at - before.at)
    const idleEach = quiet.each.map((q, i) => ((before.each[i]! - q) / (before.at - quiet.at)) * (after.at - before.at))
    return Object.assign(result, {
      cpuEach: after.each.map((a, i) => (a - before.each[i]! - idleEach[i]!) / result.total),
      sleepsEach: after.sleeps.map((a, i) => (a - before.sleeps[i]!) / result.total),
      cpuGateways: (after.gateways - before.gateways - idle) / result.total,
      cpuSim: (after.sim - before.sim) / result.total,
      cpuIdle: idle / result.total,
    })
  }
}

/** How long the instances' idle CPU is measured before each run, after SETTLE_MS of rest. */
const IDLE_MS = 1_500
const SETTLE_MS = 1_000

/**
 * How much more 3 machines serve than 1 behind a round-robin client, from CPU per request: one
 * machine serves 1/direct requests per CPU-second; three share every request out evenly, and of
 * them one in three reaches the device's holder (about a direct send's CPU) and two in three reach
 * another instance, costing `forwarded` summed over the forwarder and the holder. Three machines
 * then spend direct/3 + 2/3 x forwarded per request over their 3 CPUs: 3 x direct / (direct/3 + 2/3
 * x forwarded) times one. 3 when a forward were free, 1.8 at twice a direct send, 0.9 at four times.
 */
export function expectedRatio(direct: number, forwarded: number): number {
  return (3 * direct) / (direct / 3 + (2 / 3) * forwarded)
}

/**
 * `count` rounds of one run of each side, `seconds` long, the order rotated every round (so no side
 * always runs first); `after` sees each round as it ends (to print it). Resolves every round.
 */
export async function rotatedRounds<K extends string, T>(
  sides: Record<K, (seconds: number) => Promise<T>>,
  order: K[],
  { count, seconds }: { count: number; seconds: number },
  after: (round: Record<K, T>, index: number) => void,
): Promise<Record<K, T>[]> {
  const rounds: Record<K, T>[] = []
  for (let r = 0; r < count; r++) {
    const round = {} as Record<K, T>
    for (let k = 0; k < order.length; k++) {
      const side = order[(k + r) % order.length]!
      round[side] = await sides[side](seconds)
    }
    rounds.push(round)
    after(round, r)
  }
  return rounds
}
