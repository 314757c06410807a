import { refine, type } from 'superstruct'
import { coerceWhen, isBoolean } from '../schema/coerce-when.ts'
import { defineOperation } from './operation.ts'
import { falseFlag, optionalText, parseFlag, text, trueFlag } from '../schema/fields.ts'
import { sendFields } from './messaging-fields.ts'
import { sendNeed, sendOrSchedule } from './send-support.ts'
import { documentStruct } from '../schema/struct-schema.ts'
import { sentAnswer, targetErrors } from './answers.ts'

/** Longest message id accepted. */
const MAX_ID = 256

/** Operation 12: react to a message (`message` = an emoji, or `remove` to take the reaction back). */
export const reactToMessage = defineOperation({
  field: 'reactionMessage',
  name: 'reactToMessage',
  summary: 'React to a message with an emoji, or remove the reaction',
  answer: sentAnswer,
  errors: targetErrors,
  schema: type({ ...sendFields, reactionMessage: trueFlag(), message: reaction(), id: text(MAX_ID) }),
  device: sendNeed,
  handle: ({ message, id, to, agendamento }, context) => {
    const emoji = message.trim().toLowerCase() === 'remove' ? '' : message.trim()
    return sendOrSchedule(
      context,
      agendamento,
      async () => ({ kind: 'send', to, message: { kind: 'reaction', target: { chat: to, id: id.trim() }, emoji } }),
      emoji ? 'Reação enviada.' : 'Reação removida.',
    )
  },
})

/** Operation 13: delete a message the device sent, for everyone. */
export const deleteMessage = defineOperation({
  field: 'deleteID',
  name: 'deleteMessage',
  summary: 'Delete a sent message for everyone',
  answer: sentAnswer,
  errors: targetErrors,
  schema: type({ ...sendFields, message: falseFlag(), deleteID: text(MAX_ID) }),
  device: sendNeed,
  handle: ({ deleteID, to, agendamento }, context) =>
    sendOrSchedule(
      context,
      agendamento,
      async () => ({ kind: 'send', to, message: { kind: 'delete', target: { chat: to, id: deleteID.trim(), fromMe: true } } }),
      'Mensagem apagada.',
    ),
})

/**
 * Operation 14: mark a received message as read. `markRead` carries the message id (the webhook's
 * `idMessagem`); `markRead: "true"` with the id in `idMessagem` or `idMensagem` works too.
 */
export const markMessageRead = defineOperation({
  field: 'markRead',
  name: 'markMessageRead',
  summary: 'Send a read receipt for a received message',
  answer: sentAnswer,
  errors: targetErrors,
  schema: type({
    ...sendFields,
    markRead: coerceWhen(text(MAX_ID), isBoolean, b => String(b)),
    idMessagem: optionalText(MAX_ID),
    idMensagem: optionalText(MAX_ID),
  }),
  accepts: input => readTarget(input) !== undefined,
  device: sendNeed,
  handle: (input, context) => {
    const { to, agendamento } = input
    const id = readTarget(input)!
    return sendOrSchedule(context, agendamento, async () => ({ kind: 'read', to, target: { chat: to, id: id.trim() } }), 'Mensagem marcada como lida.')
  },
})

/** The id of the message a read receipt is for: `markRead` itself, or with `markRead: true` `idMessagem` (or `idMensagem`). */
function readTarget({ markRead, idMessagem, idMensagem }: { markRead: string; idMessagem?: string; idMensagem?: string }): string | undefined {
  return parseFlag(markRead) === true ? (idMessagem ?? idMensagem) : markRead
}

// --- Internal helpers ---

/** One emoji (a single grapheme that is a pictograph, flag or keycap), or `remove`. */
function reaction() {
  const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' })
  const struct = refine(text(32), 'emoji', v => {
    const s = v.trim()
    if (s.toLowerCase() === 'remove') return true
    const graphemes = [...segmenter.segment(s)]
    return (graphemes.length === 1 && /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20e3/u.test(s)) || 'expected one emoji or remove'
  })
  return documentStruct(struct, { description: 'One emoji, or `remove` to take the reaction back.' })
}
