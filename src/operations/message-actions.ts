import { refine } from '../schema/structs.ts'
import { coerceWhen, isBoolean } from '../schema/coerce-when.ts'
import { falseFlag, optionalText, parseFlag, text, trueFlag } from '../schema/fields.ts'
import { sendOperation, sendOrSchedule } from './send-support.ts'
import { documentStruct } from '../schema/struct-schema.ts'
import { targetErrors } from './error-answers.ts'

/** Longest message id accepted. */
const MAX_ID = 256

/** Operation 12: react to a message (`message` = an emoji, or `remove` to take the reaction back). */
export const reactToMessage = sendOperation({
  field: 'reactionMessage',
  name: 'reactToMessage',
  summary: 'React to a message with an emoji, or remove the reaction',
  errors: targetErrors,
  fields: { reactionMessage: trueFlag(), message: reaction(), id: text(MAX_ID) },
  handle: sendOrSchedule(
    ({ message }) => (emojiOf(message) ? 'Reação enviada.' : 'Reação removida.'),
    ({ message, id, to }) => ({ kind: 'send', to, message: { kind: 'reaction', target: { chat: to, id: id.trim() }, emoji: emojiOf(message) } }),
  ),
})

/** Operation 13: delete a message the device sent, for everyone. */
export const deleteMessage = sendOperation({
  field: 'deleteID',
  name: 'deleteMessage',
  summary: 'Delete a sent message for everyone',
  errors: targetErrors,
  fields: { message: falseFlag(), deleteID: text(MAX_ID) },
  handle: sendOrSchedule('Mensagem apagada.', ({ deleteID, to }) => ({
    kind: 'send',
    to,
    message: { kind: 'delete', target: { chat: to, id: deleteID.trim(), fromMe: true } },
  })),
})

/** Operation 14: mark a received message as read: its id in `markRead`, or `markRead: "true"` and the id in `idMessagem` (or `idMensagem`). */
export const markMessageRead = sendOperation({
  field: 'markRead',
  name: 'markMessageRead',
  summary: 'Send a read receipt for a received message',
  errors: targetErrors,
  fields: { markRead: coerceWhen(text(MAX_ID), isBoolean, b => String(b)), idMessagem: optionalText(MAX_ID), idMensagem: optionalText(MAX_ID) },
  accepts: input => readTarget(input) !== undefined,
  handle: sendOrSchedule('Mensagem marcada como lida.', input => ({ kind: 'read', to: input.to, target: { chat: input.to, id: readTarget(input)!.trim() } })),
})

/** The id of the message a read receipt is for: `markRead` itself, or with `markRead: true` `idMessagem` (or `idMensagem`); none for `markRead: false` (no message id). */
function readTarget({ markRead, idMessagem, idMensagem }: { markRead: string; idMessagem?: string; idMensagem?: string }): string | undefined {
  const flag = parseFlag(markRead)
  return flag === true ? (idMessagem ?? idMensagem) : flag === false ? undefined : markRead
}

// --- Internal helpers ---

/** The emoji of a reaction; empty (taking it back) for `remove`. */
function emojiOf(message: string): string {
  return message.trim().toLowerCase() === 'remove' ? '' : message.trim()
}

/**
 * One emoji grapheme (UTS #51): a flag (two regional indicators, or a tag sequence), a keycap
 * (`0-9#*`, an optional U+FE0F, U+20E3), or pictographs (each with an optional variation selector or
 * skin tone) joined by ZWJ. A lone mark (U+20E3, U+FE0F, a skin tone's base missing) is none.
 */
const emojiGrapheme =
  /^(?:\p{Regional_Indicator}{2}|[0-9#*]\ufe0f?\u20e3|\u{1F3F4}[\u{E0020}-\u{E007E}]+\u{E007F}|(?:\p{Extended_Pictographic}[\ufe0e\ufe0f]?\p{Emoji_Modifier}?|\p{Emoji_Modifier})(?:\u200d\p{Extended_Pictographic}[\ufe0e\ufe0f]?\p{Emoji_Modifier}?)*)$/u

/** Longest reaction the network takes, in UTF-16 units (the transports' limit; the longest emoji, a couple with two skin tones, is 15). */
const MAX_EMOJI_UNITS = 32

/** One emoji (a single grapheme that is a pictograph, flag or keycap, of at most MAX_EMOJI_UNITS), or `remove`. */
function reaction() {
  const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' })
  const struct = refine(text(32), 'emoji', v => {
    const s = v.trim()
    if (s.toLowerCase() === 'remove') return true
    // A long tag sequence or ZWJ chain is one grapheme the network refuses: invalid here, never sent.
    if (s.length > MAX_EMOJI_UNITS) return 'expected one emoji or remove'
    const graphemes = [...segmenter.segment(s)]
    return (graphemes.length === 1 && emojiGrapheme.test(s)) || 'expected one emoji or remove'
  })
  return documentStruct(struct, { description: 'One emoji, or `remove` to take the reaction back.' })
}
