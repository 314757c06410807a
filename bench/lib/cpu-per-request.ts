import { cpuMicros, type ServerProcess } from './process.ts'
import type { LoadResult } from './load.ts'

/** A load run with the CPU the gateways (summed over every instance of the side) and the simulator used per answered request. */
export type Measured = LoadResult & { cpuGateways: number; cpuSim: number }

/**
 * Wrap a load run so that it also measures CPU per answered request, from /proc: every instance's
 * user + system time (`cpuMicros` of each pid) before and after, summed, over the answers. What the
 * instances spend while idle (heartbeats) counts too; over a few thousand answers a second it is
 * small. The simulator's CPU (the network's side of a send) is kept apart.
 */
export function measuredCpu(sim: ServerProcess, instances: ServerProcess[], run: (seconds: number) => Promise<LoadResult>) {
  const cpu = () => ({ gateways: instances.reduce((sum, i) => sum + cpuMicros(i.child.pid), 0), sim: cpuMicros(sim.child.pid) })
  return async (seconds: number): Promise<Measured> => {
    const before = cpu()
    const result = await run(seconds)
    const after = cpu()
    return Object.assign(result, { cpuGateways: (after.gateways - before.gateways) / result.total, cpuSim: (after.sim - before.sim) / result.total })
  }
}

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
