import { boolean, enums, integer, object, refine, type } from '../schema/structs.ts'
import { coerceWhen, isString, lowerKeyword } from '../schema/coerce-when.ts'
import { GatewayError } from '../errors.ts'
import { answer, defineOperation, deviceByAppkey } from './operation.ts'
import { falseFlag, flag, text, trueFlag } from '../schema/fields.ts'
import { contactKey } from '../domain/flows.ts'
import { documentStruct } from '../schema/struct-schema.ts'
import { deviceErrors } from './error-answers.ts'

/** `to` of operation 19: `todos` (every contact) or one contact's number or LID. */
const flowTarget = documentStruct(
  refine(text(64), 'flowTarget', v => v.trim().toLowerCase() === 'todos' || contactKey(v) !== undefined || 'expected todos, a phone number or a LID'),
  {
    description:
      '`todos` (every contact), or one contact: a phone number (any spelling, `<digits>@s.whatsapp.net` or `<digits>@c.us` too) or a LID (`<digits>@lid`).',
  },
)

/** Operation 19: delete the device's flow conversations with one contact, or all of them (`to: "todos"`). */
export const deleteFlowConversations = defineOperation({
  field: 'deleteConversaFluxo',
  name: 'deleteFlowConversations',
  summary: "Delete the device's flow (agent) conversations with a contact, or with everyone",
  answer: answer({ excluidas: integer() }),
  errors: deviceErrors,
  schema: type({ appkey: text(), authkey: text(256), to: flowTarget, message: falseFlag(), deleteConversaFluxo: trueFlag() }),
  device: deviceByAppkey(),
  async handle({ to }, { services: { flows }, device }) {
    const removed = await flows.remove(device.id, to.trim().toLowerCase() === 'todos' ? undefined : contactKey(to)!)
    return { message: 'Conversas excluídas com sucesso.', excluidas: removed }
  },
})

/** Operation 20: switch the device's webhook events for chats or for groups on or off. */
export const switchWebhook = defineOperation({
  field: 'statusWebhook',
  name: 'switchWebhook',
  summary: "Switch the device's webhook events for 1:1 chats or for groups on or off",
  answer: answer({ webhook: object({ chat: boolean(), grupo: boolean() }) }),
  errors: deviceErrors,
  schema: type({
    appkey: text(),
    authkey: text(256),
    type: coerceWhen(enums(['chat', 'grupo']), isString, lowerKeyword),
    message: text(),
    statusWebhook: flag(),
  }),
  device: deviceByAppkey(),
  async handle({ type: channel, message: deviceRef, statusWebhook }, { services, account, device }) {
    const named = await services.devices.find(account, deviceRef)
    if (!named || named.id !== device.id) throw new GatewayError('device-not-found')
    const updated = await services.devices.update(device.id, d => {
      d.webhookEvents = { ...d.webhookEvents, [channel === 'chat' ? 'chat' : 'group']: statusWebhook }
    })
    if (!updated) throw new GatewayError('device-not-found')
    const { chat, group } = updated.webhookEvents
    return { message: statusWebhook ? 'Webhook ativado.' : 'Webhook desativado.', webhook: { chat, grupo: group } }
  },
})
