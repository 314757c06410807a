import { silentLogger } from '../../src/logger.ts'
import type { Storage } from '../../src/ports/storage.ts'
import type { IncomingContent, TransportContext, TransportEvent } from '../../src/ports/transport.ts'
import type { TransportHarness } from '../../src/testing/transport-contract.ts'
import { memoryTransport, simulatorServer } from '../../adapters/transport-memory/index.ts'
import type { MemoryTransport, MemoryTransportOptions, SimulatorServer, Traffic } from '../../adapters/transport-memory/index.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'
import { post } from '../helpers/http.ts'
import { receiptsIn, sentRecord } from './memory-harness.ts'

/** A gateway process as the tests see it: a remote-mode memory transport, its storage, its events. */
export interface RemoteGateway {
  transport: MemoryTransport
  storage: Storage
  events: TransportEvent[]
  /** Stop this transport and start a new one over the same storage (a process restart). */
  restart(): Promise<void>
}

/** The contract harness over a simulator server (in this process, reached over HTTP), plus handles for remote tests. */
export interface RemoteHarness extends TransportHarness {
  transport: MemoryTransport
  sim: SimulatorServer
  storage: Storage
  /** Every message that crossed the network, oldest first. */
  traffic: Traffic[]
  /** Another gateway on the same simulator server; `storage` shares this harness's store unless given. */
  gateway(storage?: Storage): Promise<RemoteGateway>
}

/** A simulator server on a free port and a remote-mode transport joined to it, recording its events. */
export async function remoteHarness(options: Omit<MemoryTransportOptions, 'simUrl' | 'network'> = {}, sim?: SimulatorServer): Promise<RemoteHarness> {
  const server = sim ?? (await simulatorServer({ port: 0, host: '127.0.0.1' }))
  const traffic: Traffic[] = []
  const stopListening = server.network.onMessage(t => traffic.push(t))
  const senders = new Set<string>()
  const gateways: RemoteGateway[] = []
  const gateway = async (storage: Storage = memoryStorage(), events: TransportEvent[] = []): Promise<RemoteGateway> => {
    const context: TransportContext = { storage, logger: silentLogger, emit: async event => void events.push(event) }
    const g: RemoteGateway = {
      transport: memoryTransport({ ...options, simUrl: server.url }),
      storage,
      events,
      async restart() {
        await g.transport.stop()
        g.transport = memoryTransport({ ...options, simUrl: server.url })
        await g.transport.start(context)
      },
    }
    await g.transport.start(context)
    gateways.push(g)
    return g
  }
  const first = await gateway()
  const harness: RemoteHarness = {
    get transport() {
      return first.transport
    },
    sim: server,
    storage: first.storage,
    events: first.events,
    traffic,
    gateway: storage => gateway(storage ?? first.storage),
    async completeLink(_deviceId, challenge, phone) {
      const answer = await post(`${server.url}/_sim/scan`, challenge.kind === 'qr' ? { qr: challenge.qr, phone } : { code: challenge.code, phone })
      if (answer.status !== 200) throw new Error(`scan failed: ${answer.text}`)
    },
    async deliver(deviceId, { from, group, content }) {
      const to = group ?? server.network.linkedPhone(deviceId)
      if (!to) throw new Error(`device ${deviceId} is not linked`)
      senders.add(from)
      const answer = await post(`${server.url}/_sim/send`, { from, to, ...phoneMessage(content) })
      if (answer.status !== 200) throw new Error(`send failed: ${answer.text}`)
      return answer.body.id as string
    },
    async sent(deviceId) {
      return traffic.filter(t => t.deviceId === deviceId).map(sentRecord)
    },
    async receipts(deviceId) {
      return receiptsIn(server.network, senders, server.network.linkedPhone(deviceId))
    },
    restart: () => first.restart(),
    async close() {
      stopListening()
      for (const g of gateways) await g.transport.stop()
      if (!sim) await server.close()
    },
  }
  return harness
}

// --- Internal helpers ---

function phoneMessage(content: IncomingContent): Record<string, unknown> {
  const { kind, ...fields } = content
  if (kind === 'location') return { type: kind, latitude: content.latitude, longitude: content.longitude, text: content.name }
  return { type: kind, ...fields }
}
