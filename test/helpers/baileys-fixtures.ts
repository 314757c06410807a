import { randomBytes } from 'node:crypto'
import { proto, type WAMessage } from '@whiskeysockets/baileys'
import type { IncomingContent } from '../../src/ports/transport.ts'

/** The linked device's own phone and LID in the Baileys tests. */
export const ME = '5511999990000'
export const ME_LID = '11112222@lid'
/** The other party of the Baileys tests: phone, phone JID and LID. */
export const BOB = '5511888880000'
export const BOB_JID = `${BOB}@s.whatsapp.net`
export const BOB_LID = '98765432@lid'
/** A group of the Baileys tests. */
export const GROUP = '120363000000000001@g.us'

/** A received (or own) message as Baileys 7 upserts it: a decoded WebMessageInfo plus v7's key extras. */
export function waMessage(input: {
  chat: string
  message: proto.IMessage | null
  id?: string
  fromMe?: boolean
  participant?: string
  participantAlt?: string
  remoteJidAlt?: string
  pushName?: string
  timestamp?: number
  stubType?: number
}): WAMessage {
  const id = input.id ?? `3EB0${randomBytes(8).toString('hex').toUpperCase()}`
  const info = proto.WebMessageInfo.fromObject({
    key: { remoteJid: input.chat, fromMe: input.fromMe ?? false, id, ...(input.participant ? { participant: input.participant } : {}) },
    ...(input.message ? { message: input.message } : {}),
    messageTimestamp: input.timestamp ?? 1_700_000_000,
    ...(input.pushName ? { pushName: input.pushName } : {}),
    ...(input.stubType !== undefined ? { messageStubType: input.stubType } : {}),
  }) as WAMessage
  info.key = {
    ...info.key,
    ...(input.remoteJidAlt ? { remoteJidAlt: input.remoteJidAlt } : {}),
    ...(input.participantAlt ? { participantAlt: input.participantAlt } : {}),
    addressingMode: (input.participant ?? input.chat).endsWith('@lid') ? 'lid' : 'pn',
  }
  return info
}

/**
 * The proto message a phone would send for a gateway IncomingContent (the inverse of the adapter's
 * classification), for harnesses that deliver messages described in the port's terms.
 */
export function protoFor(content: IncomingContent): proto.IMessage {
  switch (content.kind) {
    case 'text':
      return { conversation: content.text }
    case 'image':
      return { imageMessage: { mimetype: content.mimetype ?? 'image/jpeg', ...(content.caption ? { caption: content.caption } : {}) } }
    case 'video':
      return { videoMessage: { mimetype: content.mimetype ?? 'video/mp4', ...(content.caption ? { caption: content.caption } : {}) } }
    case 'audio':
      return { audioMessage: { mimetype: content.mimetype ?? 'audio/ogg; codecs=opus', ...(content.voiceNote ? { ptt: true } : {}) } }
    case 'document':
      return {
        documentMessage: {
          mimetype: content.mimetype ?? 'application/octet-stream',
          ...(content.fileName ? { fileName: content.fileName } : {}),
          ...(content.caption ? { caption: content.caption } : {}),
        },
      }
    case 'contact': {
      const tel = content.phone ? `TEL;type=CELL;waid=${content.phone}:+${content.phone}\n` : ''
      return { contactMessage: { displayName: content.name, vcard: content.vcard ?? `BEGIN:VCARD\nVERSION:3.0\nFN:${content.name}\n${tel}END:VCARD` } }
    }
    case 'location':
      return { locationMessage: { degreesLatitude: content.latitude, degreesLongitude: content.longitude, ...(content.name ? { name: content.name } : {}) } }
    case 'reaction':
      return { reactionMessage: { key: { id: content.target }, text: content.emoji } }
    case 'delete':
      return { protocolMessage: { type: proto.Message.ProtocolMessage.Type.REVOKE, key: { id: content.target } } }
    case 'button': {
      const contextInfo = content.target ? { stanzaId: content.target } : undefined
      return content.list
        ? { listResponseMessage: { title: content.text, singleSelectReply: { selectedRowId: content.buttonId }, contextInfo } }
        : { buttonsResponseMessage: { selectedButtonId: content.buttonId, selectedDisplayText: content.text, contextInfo } }
    }
  }
}
