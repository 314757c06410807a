import type { WAMessageUpdate } from '@whiskeysockets/baileys'
import type { TransportEvent } from 'zapgate'
import { chatName } from '../addresses.ts'
import type { MessageStore } from '../message-store.ts'
import type { SocketLike } from '../types.ts'

/** What reporting delivery failures needs. */
interface FailureDeps {
  deviceId: string
  messages: MessageStore
  /** The socket that reported them (its LID mappings name LID chats by phone). */
  socket: SocketLike
  emit(event: TransportEvent): Promise<void>
  now?: () => number
}

/** Baileys' WAMessageStatus.ERROR (proto.WebMessageInfo.Status.ERROR). */
const STATUS_ERROR = 0

/**
 * Report the device's own messages that WhatsApp refused to deliver. Baileys turns an error ack
 * (`<ack class="message" error="463">`) into `messages.update` with `status: ERROR` and the code as the
 * first `messageStubParameters` entry (a second entry, "Your account has been restricted", when the
 * account is time-locked). Each becomes one `message-failed` event, its chat named as the send named
 * it (the remembered key), else as the ack did. Other updates (delivered, read, edits) are ignored.
 */
export async function reportFailures(deps: FailureDeps, updates: WAMessageUpdate[]): Promise<void> {
  for (const { key, update } of updates ?? []) {
    if (update?.status !== STATUS_ERROR || !key?.fromMe || !key.id || !key.remoteJid) continue
    const [first, second] = update.messageStubParameters ?? []
    const code = Number.parseInt(String(first ?? ''), 10)
    const stored = (await deps.messages.all(key.id).catch(() => [])).find(message => message.key.fromMe)
    const chat = await chatName(stored?.key.remoteJid ?? key.remoteJid, deps.socket)
    const event: TransportEvent = {
      type: 'message-failed',
      deviceId: deps.deviceId,
      messageId: key.id,
      chat,
      ...(Number.isFinite(code) ? { code } : {}),
      reason: failureReason(Number.isFinite(code) ? code : undefined, second),
      timestamp: (deps.now ?? Date.now)(),
    }
    await deps.emit(event)
  }
}

/** What an error ack's code means, as far as known (WhatsApp documents none of them). */
function failureReason(code: number | undefined, detail?: string): string {
  if (detail) return `${detail} (${code ?? '?'})`
  switch (code) {
    case 463:
      return 'not delivered: the account is restricted, or has no privacy token for this contact yet (463)'
    case 479:
      return 'not delivered: WhatsApp refused the message stanza (479)'
    case undefined:
      return 'not delivered: WhatsApp reported an error'
    default:
      return `not delivered: WhatsApp reported error ${code}`
  }
}
