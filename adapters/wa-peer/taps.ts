import type { proto } from '@whiskeysockets/baileys'
import type { Baileys } from './baileys.ts'
import type { PhoneMessage } from './phone.ts'

/**
 * What a phone sends when it taps button `buttonId` of `tapped` (a message it received), as a
 * WhatsApp phone answers each kind of buttons:
 * - native-flow buttons (`interactiveMessage` with a `nativeFlowMessage`, or a `carouselMessage` whose
 *   cards carry them): an `interactiveResponseMessage` whose `nativeFlowResponseMessage` is named
 *   `quick_reply` with `paramsJson` `{"id": ...}`, the button's display text as `body.text`;
 * - legacy buttons (`buttonsMessage`): a `buttonsResponseMessage` with the button's id and text.
 * Either quotes the tapped message (`contextInfo`: its id, its sender, its content). Only a quick
 * reply can be tapped into a message: a URL or call button opens a page or a call, and a button the
 * message does not show cannot be tapped; both throw, as does a message without buttons.
 */
export function tapReply(lib: Baileys, tapped: PhoneMessage, buttonId: string): proto.IMessage {
  const content = lib.normalizeMessageContent(tapped.message) ?? {}
  const contextInfo: proto.IContextInfo = { stanzaId: tapped.id, participant: `${tapped.from}@s.whatsapp.net`, quotedMessage: content }
  const interactive = content.interactiveMessage
  if (interactive?.nativeFlowMessage || interactive?.carouselMessage) {
    const flows = [interactive.nativeFlowMessage, ...(interactive.carouselMessage?.cards ?? []).map(card => card.nativeFlowMessage)]
    const button = flows
      .flatMap(flow => flow?.buttons ?? [])
      .filter(b => b.name === 'quick_reply')
      .map(b => params(b.buttonParamsJson))
      .find(p => p.id === buttonId)
    if (!button) throw new Error(`message ${tapped.id} has no quick reply button ${buttonId}`)
    return {
      interactiveResponseMessage: {
        body: { text: typeof button.display_text === 'string' ? button.display_text : '' },
        nativeFlowResponseMessage: { name: 'quick_reply', paramsJson: JSON.stringify({ id: buttonId }), version: 3 },
        contextInfo,
      },
    }
  }
  if (content.buttonsMessage) {
    const button = content.buttonsMessage.buttons?.find(b => b.buttonId === buttonId)
    if (!button) throw new Error(`message ${tapped.id} has no button ${buttonId}`)
    return {
      buttonsResponseMessage: {
        selectedButtonId: buttonId,
        selectedDisplayText: button.buttonText?.displayText ?? '',
        type: lib.proto.Message.ButtonsResponseMessage.Type.DISPLAY_TEXT,
        contextInfo,
      },
    }
  }
  throw new Error(`message ${tapped.id} has no buttons`)
}

function params(json: string | null | undefined): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(json ?? '')
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}
