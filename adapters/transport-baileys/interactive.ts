import type { BinaryNode, proto } from '@whiskeysockets/baileys'
import type { Button, OutgoingMessage } from 'zapgate'
import { isGroupJid } from './jid.ts'
import type { BaileysModule, SocketLike } from './types.ts'

type ButtonsMessage = Extract<OutgoingMessage, { kind: 'buttons' }>
type CarouselMessage = Extract<OutgoingMessage, { kind: 'carousel' }>

/**
 * Buttons as WhatsApp renders them today (unofficial; PR #956 removed buttons from Baileys' sendMessage):
 * an interactiveMessage with a nativeFlowMessage, inside viewOnceMessage, sent with relayMessage.
 */
export function buttonsContent(message: ButtonsMessage): proto.IMessage {
  return envelope({
    ...(message.header ? { header: { title: message.header, hasMediaAttachment: false } } : {}),
    body: { text: message.text },
    ...(message.footer ? { footer: { text: message.footer } } : {}),
    nativeFlowMessage: { messageParamsJson: '', buttons: message.buttons.map(nativeFlowButton) },
  })
}

/** A carousel: the same envelope with a carouselMessage whose cards carry their uploaded images. */
export async function carouselContent(lib: BaileysModule, socket: SocketLike, message: CarouselMessage): Promise<proto.IMessage> {
  const cards = await Promise.all(
    message.cards.map(async (card): Promise<proto.Message.IInteractiveMessage> => {
      const { imageMessage } = await lib.prepareWAMessageMedia({ image: card.image.data, mimetype: card.image.mimetype }, { upload: socket.waUploadToServer })
      return {
        header: { title: card.title, ...(card.subtitle ? { subtitle: card.subtitle } : {}), hasMediaAttachment: true, imageMessage },
        body: { text: card.description ?? '' },
        nativeFlowMessage: { messageParamsJson: '', buttons: card.buttons.map(nativeFlowButton) },
      }
    }),
  )
  return envelope({
    body: { text: message.text },
    ...(message.footer ? { footer: { text: message.footer } } : {}),
    carouselMessage: { cards, messageVersion: 1 },
  })
}

/** One button as a native-flow button: quick_reply, cta_url or cta_call. */
export function nativeFlowButton(button: Button): { name: string; buttonParamsJson: string } {
  const params = (name: string, value: object) => ({ name, buttonParamsJson: JSON.stringify(value) })
  switch (button.type) {
    case 'reply':
      return params('quick_reply', { display_text: button.text, id: button.id })
    case 'url':
      return params('cta_url', { display_text: button.text, url: button.url, merchant_url: button.url })
    case 'call':
      return params('cta_call', { display_text: button.text, phone_number: `+${button.phone.replace(/\D/g, '')}` })
  }
}

/**
 * The extra stanza nodes interactive messages need: without `biz` the server accepts the message and
 * nothing renders; the `bot` node goes only into 1:1 chats.
 */
export function interactiveNodes(jid: string): BinaryNode[] {
  const nodes: BinaryNode[] = [
    {
      tag: 'biz',
      attrs: {},
      content: [{ tag: 'interactive', attrs: { type: 'native_flow', v: '1' }, content: [{ tag: 'native_flow', attrs: { v: '9', name: 'mixed' } }] }],
    },
  ]
  if (!isGroupJid(jid)) nodes.push({ tag: 'bot', attrs: { biz_bot: '1' } })
  return nodes
}

/** Buttons as numbered plain text (the `buttonsFallback: 'text'` rendering). */
export function buttonsText(message: ButtonsMessage): string {
  const lines = [...(message.header ? [`*${message.header}*`] : []), message.text, '', ...message.buttons.map((b, i) => `${i + 1}. ${buttonLine(b)}`)]
  if (message.footer) lines.push('', `_${message.footer}_`)
  return lines.join('\n')
}

/** A carousel as numbered plain text: each card's title, texts and buttons (images are left out). */
export function carouselText(message: CarouselMessage): string {
  const lines = [message.text]
  message.cards.forEach((card, i) => {
    lines.push('', `*${i + 1}. ${card.title}*`)
    if (card.subtitle) lines.push(card.subtitle)
    if (card.description) lines.push(card.description)
    for (const button of card.buttons) lines.push(`- ${buttonLine(button)}`)
  })
  if (message.footer) lines.push('', `_${message.footer}_`)
  return lines.join('\n')
}

// --- Internal helpers ---

function envelope(interactiveMessage: proto.Message.IInteractiveMessage): proto.IMessage {
  return {
    viewOnceMessage: {
      message: {
        messageContextInfo: { deviceListMetadata: {}, deviceListMetadataVersion: 2 },
        interactiveMessage,
      },
    },
  }
}

function buttonLine(button: Button): string {
  if (button.type === 'url') return `${button.text}: ${button.url}`
  if (button.type === 'call') return `${button.text}: +${button.phone.replace(/\D/g, '')}`
  return button.text
}
