import type { BinaryNode, proto } from '@whiskeysockets/baileys'
import type { Button, OutgoingMessage } from 'zapgate'
import type { BaileysModule, SocketLike } from './types.ts'
import { invalid } from './validate.ts'

type ButtonsMessage = Extract<OutgoingMessage, { kind: 'buttons' }>
type CarouselMessage = Extract<OutgoingMessage, { kind: 'carousel' }>

/** Buttons a phone shows on one interactive message (or one carousel card). */
const MAX_INTERACTIVE_BUTTONS = 3

/**
 * Buttons as WhatsApp renders them today (unofficial; PR #956 removed buttons from Baileys'
 * sendMessage): an interactiveMessage with a nativeFlowMessage, sent with relayMessage and the `biz`
 * node. Not wrapped in viewOnceMessage: WhatsApp Web and Desktop drop the buttons of a view-once
 * bubble (Evolution API PR #2526, whatsapp-rust's sends).
 */
export function buttonsContent(message: ButtonsMessage): proto.IMessage {
  return {
    interactiveMessage: {
      ...(message.header ? { header: { title: message.header, hasMediaAttachment: false } } : {}),
      body: { text: message.text },
      ...(message.footer ? { footer: { text: message.footer } } : {}),
      nativeFlowMessage: { messageParamsJson: '', buttons: message.buttons.map(nativeFlowButton) },
    },
  }
}

/**
 * Refuse what a phone would not render as sent: more than three buttons on a message or a card.
 * Reply, URL and call buttons may be mixed: the `biz` node announces the flow as `mixed`, and current
 * implementations (whatsapp-rust's live probes, baileyrs #7 on rc10) deliver and render mixed
 * quick_reply / cta_url / cta_call buttons; Evolution API's stricter rule (reply buttons alone) is
 * not followed. `buttonsFallback: 'text'` sends any number as text.
 */
export function checkInteractive(message: ButtonsMessage | CarouselMessage): void {
  if (message.kind === 'buttons' && message.buttons.length > MAX_INTERACTIVE_BUTTONS)
    invalid(`WhatsApp shows at most ${MAX_INTERACTIVE_BUTTONS} buttons on a message`)
  if (message.kind === 'carousel' && message.cards.some(card => card.buttons.length > MAX_INTERACTIVE_BUTTONS)) {
    invalid(`WhatsApp shows at most ${MAX_INTERACTIVE_BUTTONS} buttons on a carousel card`)
  }
}

/** A carousel: an interactiveMessage with a carouselMessage whose cards carry their uploaded images. */
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
  return {
    interactiveMessage: {
      body: { text: message.text },
      ...(message.footer ? { footer: { text: message.footer } } : {}),
      carouselMessage: { cards, messageVersion: 1 },
    },
  }
}

/** One button as a native-flow button: quick_reply, cta_url or cta_call. */
function nativeFlowButton(button: Button): { name: string; buttonParamsJson: string } {
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
 * The `biz` stanza node interactive messages need: without it the server accepts the message and
 * nothing renders; a bare `<interactive>` child is refused with error ack 479 (whatsmeow PR #1235).
 * The shape current clients send: `actual_actors`, `host_storage` and `privacy_mode_ts` on `biz`,
 * the native flow named `mixed`, and `<quality_control source_type="third_party"/>`. No `<bot
 * biz_bot="1"/>` node: it marks the message as sent by a bot, which WhatsApp labels as AI (Baileys PR
 * #2537 adds it precisely to get that label).
 */
export function interactiveNodes(nowSeconds = Math.floor(Date.now() / 1000)): BinaryNode[] {
  return [
    {
      tag: 'biz',
      attrs: { actual_actors: '2', host_storage: '2', privacy_mode_ts: String(nowSeconds) },
      content: [
        { tag: 'interactive', attrs: { type: 'native_flow', v: '1' }, content: [{ tag: 'native_flow', attrs: { v: '9', name: 'mixed' } }] },
        { tag: 'quality_control', attrs: { source_type: 'third_party' } },
      ],
    },
  ]
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

function buttonLine(button: Button): string {
  if (button.type === 'url') return `${button.text}: ${button.url}`
  if (button.type === 'call') return `${button.text}: +${button.phone.replace(/\D/g, '')}`
  return button.text
}
