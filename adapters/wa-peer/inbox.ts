import type { proto } from '@whiskeysockets/baileys'
import type { Button } from 'zapgate'
import type { InboxCard, InboxContent, InboxEntry } from 'zapgate/adapters/transport-memory'
import type { DeviceReceipt } from './model.ts'
import type { PhoneMessage } from './phone.ts'

/**
 * A phone's inbox in the simulator's shape (`GET /_sim/inbox/:phone`, docs/simulator.md): what the
 * phone decrypted from devices, read receipts as `{type: 'read', target}`, oldest first. Copies of
 * what the phone's own devices sent are left out, as the simulator's inbox has none.
 */
export function inboxEntries(messages: readonly PhoneMessage[], receipts: readonly DeviceReceipt[]): InboxEntry[] {
  const entries: InboxEntry[] = []
  for (const message of messages) {
    if (message.sentByOwnDevice) continue
    const group = message.to.endsWith('@g.us') ? { group: message.to } : {}
    entries.push({ id: message.id, from: message.from, ...inboxContent(message.message), ...group, timestamp: message.at } as InboxEntry)
  }
  for (const receipt of receipts) {
    if (receipt.type !== 'read') continue
    for (const target of receipt.ids) entries.push({ id: `read-${target}`, from: userOf(receipt.fromDevice), type: 'read', target, timestamp: receipt.at })
  }
  return entries.sort((a, b) => a.timestamp - b.timestamp)
}

/** A decrypted message's content in the simulator's field names; `{type: 'other', kinds}` for a kind the simulator has no name for. */
function inboxContent(message: proto.IMessage): InboxContent | { type: 'other'; kinds: string[] } {
  const m = message
  if (m.conversation) return { type: 'text', text: m.conversation }
  if (m.extendedTextMessage?.text != null) return { type: 'text', text: m.extendedTextMessage.text }
  const media = mediaContent(m)
  if (media) return media
  if (m.contactMessage) return { type: 'contact', name: m.contactMessage.displayName ?? '', phone: /waid=(\d+)/.exec(m.contactMessage.vcard ?? '')?.[1] ?? '' }
  if (m.locationMessage) {
    const { degreesLatitude, degreesLongitude, name } = m.locationMessage
    return { type: 'location', latitude: degreesLatitude ?? 0, longitude: degreesLongitude ?? 0, ...(name ? { text: name } : {}) }
  }
  if (m.reactionMessage) return { type: 'reaction', target: m.reactionMessage.key?.id ?? '', emoji: m.reactionMessage.text ?? '' }
  if (m.protocolMessage?.type === 0 && m.protocolMessage.key?.id) return { type: 'delete', target: m.protocolMessage.key.id }
  const interactive = m.interactiveMessage
  if (interactive?.carouselMessage) {
    return {
      type: 'carousel',
      text: interactive.body?.text ?? '',
      ...optional('footer', interactive.footer?.text),
      cards: (interactive.carouselMessage.cards ?? []).map(card),
    }
  }
  if (interactive?.nativeFlowMessage) {
    return {
      type: 'buttons',
      text: interactive.body?.text ?? '',
      ...optional('header', interactive.header?.title),
      ...optional('footer', interactive.footer?.text),
      buttons: buttonsOf(interactive.nativeFlowMessage),
    }
  }
  return { type: 'other', kinds: Object.keys(m).filter(k => (m as Record<string, unknown>)[k] != null) }
}

function mediaContent(m: proto.IMessage): InboxContent | undefined {
  const kinds = [
    ['image', m.imageMessage],
    ['video', m.videoMessage],
    ['audio', m.audioMessage],
    ['document', m.documentMessage ?? m.documentWithCaptionMessage?.message?.documentMessage],
  ] as const
  for (const [type, media] of kinds) {
    if (!media) continue
    const fields = media as proto.Message.IDocumentMessage & proto.Message.IAudioMessage
    return {
      type,
      ...optional('caption', fields.caption),
      ...optional('fileName', fields.fileName),
      ...optional('mimetype', fields.mimetype),
      ...(fields.fileLength != null ? { bytes: Number(fields.fileLength) } : {}),
      ...(type === 'audio' && fields.ptt ? { voiceNote: true } : {}),
    }
  }
  return undefined
}

function card(c: proto.Message.IInteractiveMessage): InboxCard {
  const image = c.header?.imageMessage
  return {
    title: c.header?.title ?? '',
    ...optional('subtitle', c.header?.subtitle),
    ...optional('description', c.body?.text),
    image: { mimetype: image?.mimetype ?? '', bytes: Number(image?.fileLength ?? 0) },
    buttons: c.nativeFlowMessage ? buttonsOf(c.nativeFlowMessage) : [],
  }
}

/** Native-flow buttons back as the gateway's buttons (quick_reply, cta_url, cta_call). */
function buttonsOf(flow: proto.Message.InteractiveMessage.INativeFlowMessage): Button[] {
  return (flow.buttons ?? []).map(b => {
    let params: Record<string, string> = {}
    try {
      params = JSON.parse(b.buttonParamsJson ?? '{}')
    } catch {
      // an unreadable button keeps its name only
    }
    const text = params.display_text ?? ''
    if (b.name === 'cta_url') return { type: 'url', text, url: params.url ?? '' }
    if (b.name === 'cta_call') return { type: 'call', text, phone: params.phone_number ?? '' }
    return { type: 'reply', id: params.id ?? '', text }
  })
}

function optional<K extends string>(key: K, value: string | null | undefined): { [P in K]?: string } {
  return (value ? { [key]: value } : {}) as { [P in K]?: string }
}

function userOf(jid: string): string {
  return jid.split('@')[0].split(':')[0]
}
