import { optionalText, text } from '../schema/fields.ts'
import type { Button, Card } from '../ports/transport.ts'
import { MAX_BUTTONS, MAX_CAPTION, MAX_CARDS, MAX_HEADER, button, card, list, type WireButton, type WireCardButton } from './messaging-fields.ts'
import { sendOperation, sendOrSchedule } from './send-support.ts'
import { mediaErrors, sendErrors } from './error-answers.ts'

/** Operation 15: a text with up to 3 buttons (reply, URL, call), optional header and footer. */
export const sendButtons = sendOperation({
  field: 'buttons',
  name: 'sendButtons',
  summary: 'Send a message with buttons',
  fields: { message: text(MAX_CAPTION), buttons: list(button, 1, MAX_BUTTONS), header_title: optionalText(MAX_HEADER), footer_text: optionalText(MAX_HEADER) },
  accepts: ({ buttons }) => !hasDuplicateIds(buttons),
  handle: sendOrSchedule('Mensagem com botões enviada.', ({ message: text, buttons, header_title: header, footer_text: footer, to }) => ({
    kind: 'send',
    to,
    message: { kind: 'buttons', text, ...(header ? { header } : {}), ...(footer ? { footer } : {}), buttons: buttons.map(toButton) },
  })),
})

/** Operation 16: a text above 1 to 10 cards, each with an image (fetched from `image_url`) and 1 or 2 buttons. */
export const sendCarousel = sendOperation({
  field: 'cards',
  name: 'sendCarousel',
  summary: 'Send a carousel of cards',
  errors: [...sendErrors, ...mediaErrors, 'card-image-invalid'],
  fields: { message: text(MAX_CAPTION), cards: list(card, 1, MAX_CARDS), footer_text: optionalText(MAX_HEADER) },
  accepts: ({ cards }) => !hasDuplicateIds(cards.flatMap(c => c.buttons)), // a tap names its id alone: unique across the cards, not only within one
  handle: sendOrSchedule('Carrossel enviado.', async ({ message: text, cards, footer_text: footer, to }, { services, mediaHold }) => {
    const images = await services.messaging.media.cardImages(
      cards.map(c => c.image_url.trim()),
      mediaHold,
    )
    const built: Card[] = cards.map((c, i) => ({
      image: images[i],
      title: c.title,
      ...(c.subtitle ? { subtitle: c.subtitle } : {}),
      ...(c.description ? { description: c.description } : {}),
      buttons: c.buttons.map(toButton),
    }))
    return { kind: 'send', to, message: { kind: 'carousel', text, ...(footer ? { footer } : {}), cards: built } }
  }),
})

// --- Internal helpers ---

/** A wire button as the Transport port's Button (reply buttons without an id are numbered 1, 2, 3). */
function toButton(wire: WireButton | WireCardButton, index: number): Button {
  switch (wire.type) {
    case 'replyButton':
    case 'quickReplyButton':
      return { type: 'reply', id: wire.id?.trim() || String(index + 1), text: wire.displaytext }
    case 'urlButton':
      return { type: 'url', text: wire.displaytext, url: wire.action.trim() }
    case 'callButton':
      return { type: 'call', text: wire.displaytext, phone: `+${wire.action}` }
  }
}

function hasDuplicateIds(buttons: (WireButton | WireCardButton)[]): boolean {
  const ids = buttons.map((b, i) => (b.type === 'replyButton' || b.type === 'quickReplyButton' ? b.id?.trim() || String(i + 1) : undefined)).filter(Boolean)
  return new Set(ids).size !== ids.length
}
