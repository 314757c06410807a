import type { Instances } from '../../domain/instances.ts'

/** An instance holding a device, and its advertised URL. */
export interface KnownHolder {
  id: string
  url: string
}

/** At most this many devices are remembered (the oldest entry goes first). */
const MAX_DEVICES = 50_000

/**
 * Which other instance holds a device, as the last forward found it: read once, not per forward.
 * A hint, safe as one (docs/scaling.md, "Where it goes"): an entry holds while its instance is
 * alive (the registry, in memory) and goes at its departure; a holder refuses a forward for a device
 * it does not hold before anything runs, and the forwarder then forgets the entry and asks the store.
 */
export class KnownHolders {
  private readonly byDevice = new Map<string, KnownHolder>()

  constructor(private readonly instances: Instances) {
    instances.onDeparture(gone => {
      const departed = new Set(gone)
      for (const [deviceId, holder] of this.byDevice) if (departed.has(holder.id)) this.byDevice.delete(deviceId)
    })
  }

  /** The remembered holder of the device while it is alive. */
  get(deviceId: string): KnownHolder | undefined {
    const known = this.byDevice.get(deviceId)
    if (known === undefined || this.instances.isAlive(known.id)) return known
    this.byDevice.delete(deviceId)
    return undefined
  }

  /** Remember that `holder` answered for the device. */
  remember(deviceId: string, holder: KnownHolder): void {
    if (this.byDevice.size >= MAX_DEVICES && !this.byDevice.has(deviceId)) this.byDevice.delete(this.byDevice.keys().next().value!)
    this.byDevice.set(deviceId, holder)
  }

  /** Forget the device's holder (a forward there failed, or it does not hold the device any more). */
  forget(deviceId: string): void {
    this.byDevice.delete(deviceId)
  }
}
