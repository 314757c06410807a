import type { WAMessageKey } from '@whiskeysockets/baileys'
import type { MessageRef } from 'zapgate'
import { isGroupJid, normalizeJid } from './jid.ts'

/**
 * Where a message id belongs. Ids are chosen by the sender's client, and WhatsApp scopes them as its
 * message keys do (remoteJid, fromMe, id, participant): a contact's message is the one of an earlier
 * key with its id only when the chat and (in a group) the sender match too. A 1:1 chat is known by
 * each form it was seen under (phone JID, LID), a group sender too: one form in common is enough.
 * The account's own messages (fromMe) carry ids its own clients chose: one id is one own message,
 * whatever form its chat is named in.
 */
export interface MessageScope {
  fromMe: boolean
  /** Normalised JIDs of the chat of a contact's message: the group id, or the contact's phone JID and/or LID. */
  chats: string[]
  /** Normalised JIDs of the sender of a contact's group message. */
  senders: string[]
}

type ScopedKey = Pick<WAMessageKey, 'remoteJid' | 'fromMe' | 'participant' | 'remoteJidAlt' | 'participantAlt'>

/** The scope of a message key; `known`: further forms of a 1:1 chat (from the LID mappings). */
export function scopeOf(key: ScopedKey, known: (string | undefined)[] = []): MessageScope {
  if (key.fromMe) return { fromMe: true, chats: [], senders: [] }
  const chat = key.remoteJid ? normalizeJid(key.remoteJid) : ''
  if (isGroupJid(chat)) return { fromMe: false, chats: [chat], senders: forms([key.participant, key.participantAlt]) }
  return { fromMe: false, chats: forms([chat, key.remoteJidAlt, ...known]), senders: [] }
}

/**
 * The scope a MessageRef names, its chat and participant as a message event gave them: phone digits,
 * a LID or a group id (a JID of any form is taken too); without `fromMe`, a contact's message.
 */
export function scopeOfRef(ref: MessageRef): MessageScope {
  const jid = (address: string) => (address.includes('@') ? address : `${address}@s.whatsapp.net`)
  return scopeOf({ remoteJid: jid(ref.chat), fromMe: ref.fromMe === true, participant: ref.participant && jid(ref.participant) })
}

/** Whether two scopes are one place (a group sender unknown on either side matches any). */
export function sameScope(a: MessageScope, b: MessageScope): boolean {
  if (a.fromMe || b.fromMe) return a.fromMe === b.fromMe
  return overlap(a.chats, b.chats) && (a.senders.length === 0 || b.senders.length === 0 || overlap(a.senders, b.senders))
}

// --- Internal helpers ---

function forms(jids: (string | null | undefined)[]): string[] {
  return [...new Set(jids.filter((jid): jid is string => !!jid).map(normalizeJid))]
}

function overlap(a: string[], b: string[]): boolean {
  return a.some(jid => b.includes(jid))
}
