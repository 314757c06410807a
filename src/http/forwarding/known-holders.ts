import type { Instances } from '../../domain/instances.ts'

/** An instance holding a device, and its advertised URL. */
export interface KnownHolder {
  id: string
  url: string
}

/** At most this many devices are remembered (the oldest entry goes first). */
const MAX_DEVICES = 50_000

/**
 * Which other instance holds a device, as the last forward found it: the forwarding instance reads
 * the device's lease and its holder's record once, not per request. Only a hint, and safe as one:
 * an entry holds while its instance is alive (the registry as of the last heartbeat, in memory) and
 * goes at its departure; the holder checks each forwarded request against the lease it holds (in
 * memory, at its epoch), and one for a device it does not hold is refused before anything runs
 * (NOT_HOLDER_HEADER), which forgets the entry and sends the request to the holder the store names.
 * So a lease taken over (a new epoch) costs one refused hop, never a request run by a non-holder.
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
