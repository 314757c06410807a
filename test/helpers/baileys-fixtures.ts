import { randomBytes } from 'node:crypto'
import { proto, type WAMessage } from '@whiskeysockets/baileys'

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
