import { silentLogger } from '../../src/logger.ts'
import type { Storage } from '../../src/ports/storage.ts'
import type { IncomingContent, OutgoingMessage, TransportContext, TransportEvent } from '../../src/ports/transport.ts'
import type { ReceiptRecord, SentRecord, TransportHarness } from '../../src/testing/transport-contract.ts'
import { MemoryNetwork, memoryTransport } from '../../adapters/transport-memory/index.ts'
import type { MemoryTransport, MemoryTransportOptions, PhoneMessage, Traffic } from '../../adapters/transport-memory/index.ts'
import { memoryStorage } from '../helpers/memory-storage.ts'

/** The contract harness over the memory network, plus handles for memory-specific tests. */
export interface MemoryHarness extends TransportHarness {
  transport: MemoryTransport
  network: MemoryNetwork
  storage: Storage
  context: TransportContext
  /** Every message that crossed the network, oldest first. */
  traffic: Traffic[]
}

/** A started memory transport on a fresh network (or `options.network`), recording its events. */
export async function memoryHarness(options: MemoryTransportOptions = {}): Promise<MemoryHarness> {
  const network = options.network ?? new MemoryNetwork()
  const storage = memoryStorage()
  const events: TransportEvent[] = []
  const traffic: Traffic[] = []
  const stopListening = network.onMessage(t => traffic.push(t))
  const senders = new Set<string>()
  const context: TransportContext = { storage, logger: silentLogger, emit: async event => void events.push(event) }
  const harness: MemoryHarness = {
    transport: memoryTransport({ ...options, network }),
    network,
    storage,
    context,
    events,
    traffic,
    async completeLink(_deviceId, challenge, phone) {
      await network.scan(challenge.kind === 'qr' ? { qr: challenge.qr } : { code: challenge.code }, phone)
    },
    async deliver(deviceId, { from, group, content }) {
      const to = group ?? network.linkedPhone(deviceId)
      if (!to) throw new Error(`device ${deviceId} is not linked`)
      senders.add(from)
      return network.sendFromPhone(from, to, phoneMessage(content))
    },
    async sent(deviceId) {
      return traffic.filter(t => t.deviceId === deviceId).map(sentRecord)
    },
    async receipts(deviceId) {
      return receiptsIn(network, senders, network.linkedPhone(deviceId))
    },
    async restart() {
      await harness.transport.stop()
      harness.transport = memoryTransport({ ...options, network })
      await harness.transport.start(context)
    },
    async close() {
      stopListening()
      await harness.transport.stop()
    },
  }
  await harness.transport.start(context)
  return harness
}

/** Link `deviceId` as `phone` by QR; resolves once it is open. */
export async function linkAs(h: MemoryHarness, deviceId: string, phone: string): Promise<void> {
  const challenge = await h.transport.link(deviceId, {})
  await h.completeLink(deviceId, challenge, phone)
}

/** A message that crossed the memory network, as the contract's SentRecord (text, reaction and delete details included). */
export function sentRecord(t: Traffic): SentRecord {
  const c = t.content
  const kind: OutgoingMessage['kind'] =
    c.type === 'image' || c.type === 'video' || c.type === 'audio' || c.type === 'document' ? 'media' : (c.type as OutgoingMessage['kind'])
  const record: SentRecord = { id: t.id, to: t.to, kind }
  if (c.type === 'text') record.text = c.text
  if (c.type === 'reaction' || c.type === 'delete') record.target = c.target
  if (c.type === 'reaction') record.emoji = c.emoji
  return record
}

/** The read receipts `reader` sent, as the phones in `senders` received them (in their inboxes), oldest first. */
export function receiptsIn(network: MemoryNetwork, senders: Iterable<string>, reader: string | undefined): ReceiptRecord[] {
  const entries = [...senders].flatMap(sender =>
    network.inbox(sender).flatMap(e => (e.type === 'read' && e.from === reader ? [{ e, chat: e.group ?? sender }] : [])),
  )
  return entries.sort((a, b) => a.e.timestamp - b.e.timestamp).map(({ e, chat }) => ({ chat, id: (e as { target: string }).target }))
}

// --- Internal helpers ---

function phoneMessage(content: IncomingContent): PhoneMessage {
  switch (content.kind) {
    case 'text':
      return { type: 'text', text: content.text }
    case 'contact':
      return { type: 'contact', name: content.name, phone: content.phone ?? '' }
    case 'location':
      return { type: 'location', latitude: content.latitude, longitude: content.longitude, text: content.name }
    case 'reaction':
      return { type: 'reaction', target: content.target, emoji: content.emoji }
    case 'delete':
      return { type: 'delete', target: content.target }
    case 'button':
      return { type: 'button', target: content.target ?? '', buttonId: content.buttonId, text: content.text, list: content.list }
    default:
      return { type: content.kind, caption: content.caption, fileName: content.fileName, mimetype: content.mimetype, base64: content.base64 }
  }
}
