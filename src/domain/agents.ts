import { randomUUID } from 'node:crypto'
import { Collection } from '../store/collection.ts'
import type { KeyedLock } from '../store/keyed-lock.ts'
import type { Storage } from '../ports/storage.ts'
import type { Account } from './accounts.ts'
import type { Device, Devices } from './devices.ts'

interface Agent {
  id: string
  accountId: string
  deviceId: string
  name: string
  createdAt: number
}

/** How many agents one device keeps (the last created answers). */
const MAX_AGENTS_PER_DEVICE = 50

/** Agents: created on a device of the account; the device's newest agent is its active one. */
export class Agents {
  private readonly agents: Collection<Agent>

  constructor(
    storage: Storage,
    lock: KeyedLock,
    private readonly devices: Devices,
  ) {
    this.agents = new Collection(storage, lock, 'agent')
  }

  /** Create an agent on the device (which the caller has already found inside `account`). */
  async create(account: Account, device: Device, name: string): Promise<Agent> {
    const agent: Agent = { id: randomUUID(), accountId: account.id, deviceId: device.id, name, createdAt: Date.now() }
    await this.agents.put(agent.id, agent)
    let dropped: string[] = []
    await this.devices.update(device.id, d => {
      d.agentIds.push(agent.id)
      dropped = d.agentIds.splice(0, Math.max(0, d.agentIds.length - MAX_AGENTS_PER_DEVICE))
    })
    for (const id of dropped) await this.agents.remove(id)
    return agent
  }

  /** The agent that answers on a device, if any. */
  async activeFor(device: Device): Promise<Agent | undefined> {
    const id = device.agentIds.at(-1)
    return id ? this.agents.get(id) : undefined
  }

  /** Delete the device's agents (removal hook). */
  async removeDevice(device: Device): Promise<void> {
    for (const id of device.agentIds) await this.agents.remove(id)
  }
}
