import type { WAMessageKey } from '@whiskeysockets/baileys'
import type { Storage } from '../../src/ports/storage.ts'
import type { IncomingContent, LinkChallenge, OutgoingMessage, TransportContext, TransportEvent } from '../../src/ports/transport.ts'
import { silentLogger } from '../../src/logger.ts'
import { baileysTransport, type BaileysTransport } from '../../adapters/transport-baileys/index.ts'
import type { BaileysTransportOptions } from '../../adapters/transport-baileys/options.ts'
import { phoneOf } from '../../adapters/transport-baileys/jid.ts'
import { protoFor, waMessage } from './baileys-fixtures.ts'
import { FakeBaileys, settle, type FakeBehaviour, type SentRecord as FakeSent } from './fake-baileys/index.ts'
import { RecordingStorage } from './recording-storage.ts'

/** One send as the network side saw it (the shape of the transport contract suite's SentRecord). */
export interface HarnessSent {
  id: string
  to: string
  kind: OutgoingMessage['kind']
  text?: string
  /** For a reaction or a delete: the id of the message it is about. */
  target?: string
  /** For a reaction: the emoji (empty: removed). */
  emoji?: string
}

/**
 * The Baileys transport over a FakeBaileys network, shaped as the shared transport contract's
 * TransportHarness (src/testing/transport-contract.ts): link completion, deliveries described in the
 * port's terms, what was sent, and restarts over the same storage and network. Run the contract with
 * `transportContract(test, () => baileysHarness(), { validatesTargets: true })`.
 */
export interface BaileysHarness {
  transport: BaileysTransport
  events: TransportEvent[]
  fake: FakeBaileys
  storage: Storage
  completeLink(deviceId: string, challenge: LinkChallenge, phone: string): Promise<void>
  deliver(deviceId: string, incoming: { from: string; group?: string; content: IncomingContent }): Promise<string>
  sent(deviceId: string): Promise<HarnessSent[]>
  /** The read receipts the device sent (its sockets' readMessages calls), oldest first. */
  receipts(deviceId: string): Promise<{ chat: string; id: string }[]>
  restart(): Promise<void>
  close(): Promise<void>
}

/** Start a harness; transport options default to a fast back-off over the fake's offline factory. */
export async function baileysHarness(options: BaileysTransportOptions & { behaviour?: FakeBehaviour } = {}): Promise<BaileysHarness> {
  const { behaviour, ...rest } = options
  const fake = new FakeBaileys(behaviour)
  const storage = new RecordingStorage()
  const events: TransportEvent[] = []
  const context: TransportContext = { storage, logger: silentLogger, emit: async event => void events.push(event) }
  const make = () => baileysTransport({ ...fake.transportOptions(), reconnect: { initialDelayMs: 5, maxDelayMs: 40 }, ...rest })
  const harness: BaileysHarness = {
    transport: make(),
    events,
    fake,
    storage,
    async completeLink(deviceId, challenge, phone) {
      const socket = fake.current(deviceId)
      const matches =
        challenge.kind === 'qr' ? socket.qrs.includes(challenge.qr) : socket.calls.some(c => c.method === 'requestPairingCode' && c.args[1] === challenge.code)
      if (!matches) throw new Error(`the ${challenge.kind} is not the one of ${deviceId}'s current socket`)
      await fake.completeLink(deviceId, phone)
    },
    async deliver(deviceId, { from, group, content }) {
      const message = waMessage({
        chat: group ?? `${from}@s.whatsapp.net`,
        ...(group ? { participant: `${from}@s.whatsapp.net` } : {}),
        timestamp: Math.floor(Date.now() / 1000),
        message: protoFor(content),
      })
      if ('base64' in content && content.base64) fake.media.set(message.key.id!, Buffer.from(content.base64, 'base64'))
      await fake.deliver(deviceId, message)
      return message.key.id!
    },
    async sent(deviceId) {
      return fake.sent(deviceId).map(sentRecord)
    },
    async receipts(deviceId) {
      const calls = fake.socketsOf(deviceId).flatMap(s => s.calls.filter(c => c.method === 'readMessages'))
      return calls.flatMap(c => (c.args[0] as WAMessageKey[]).map(key => ({ chat: phoneOf(key.remoteJid) ?? key.remoteJid!, id: key.id! })))
    },
    async restart() {
      await harness.transport.stop()
      harness.transport = make()
      await harness.transport.start(context)
      await settle()
    },
    async close() {
      await harness.transport.stop()
    },
  }
  await harness.transport.start(context)
  return harness
}

// --- Internal helpers ---

function sentRecord(record: FakeSent): HarnessSent {
  const to = phoneOf(record.jid) ?? record.jid
  if (record.via === 'relayMessage') {
    const interactive = record.message.interactiveMessage
    return { id: record.id, to, kind: interactive?.carouselMessage ? 'carousel' : 'buttons' }
  }
  const c = record.content as Record<string, unknown>
  if ('text' in c) return { id: record.id, to, kind: 'text', text: String(c.text) }
  if ('image' in c || 'video' in c || 'audio' in c || 'document' in c) return { id: record.id, to, kind: 'media' }
  if ('contacts' in c) return { id: record.id, to, kind: 'contact' }
  if ('location' in c) return { id: record.id, to, kind: 'location' }
  if ('react' in c) {
    const react = c.react as { text?: string; key: WAMessageKey }
    return { id: record.id, to, kind: 'reaction', target: react.key.id!, emoji: react.text ?? '' }
  }
  if ('delete' in c) return { id: record.id, to, kind: 'delete', target: (c.delete as WAMessageKey).id! }
  throw new Error(`a send the harness cannot describe: ${JSON.stringify(record.content)}`)
}
