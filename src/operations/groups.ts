import { array, boolean, object, optional, refine, string, type } from '../schema/structs.ts'
import { coerceWhen, isAnything, isStringOrNumber } from '../schema/coerce-when.ts'
import { answer, defineOperation, deviceByAppkey } from './operation.ts'
import { falseFlag, sizedArray, text, trueFlag } from '../schema/fields.ts'
import { parseRecipient } from '../domain/messaging/addresses.ts'
import { INVITE_LINK_BASE } from '../domain/messaging/groups.ts'
import { documentStruct } from '../schema/struct-schema.ts'
import { toArray } from './messaging-fields.ts'
import { deviceErrors, queueErrors } from './error-answers.ts'

/** Most members a new group can be created with (WhatsApp: 1 024 including the creator). */
const MAX_MEMBERS = 1023

/** Operation 21: a group's information, by group id or invite link/code. */
export const groupInfo = defineOperation({
  field: 'infoConvite',
  name: 'groupInfo',
  summary: 'Information about a group, by id or invite',
  answer: answer({ grupo: object({ id: string(), titulo: string(), descricao: string(), participantes: array(object({ id: string(), admin: boolean() })) }) }),
  errors: [...deviceErrors, 'group-not-found', ...queueErrors, 'not-admin'],
  schema: type({ appkey: text(), authkey: text(256), message: falseFlag(), infoConvite: text(512) }),
  device: deviceByAppkey('device'),
  async handle({ infoConvite: ref }, { services, device }) {
    const info = await services.messaging.groups.info(device, ref)
    // By phone when the network gave it (a LID-addressed group names members by LID, with the phone beside), as webhooks name senders.
    const participantes = info.participants.map(p => ({ id: p.phone ? `${p.phone}@s.whatsapp.net` : p.id, admin: p.admin }))
    return { message: 'Grupo encontrado.', grupo: { id: info.id, titulo: info.subject, descricao: info.description ?? '', participantes } }
  },
})

/** Operation 22: create a group (`message` = name, `usuarios` = phones separated by `-`); answers `grupoId`. */
export const createGroup = defineOperation({
  field: 'criarGrupo',
  name: 'createGroup',
  summary: 'Create a group with the device as admin',
  answer: answer({ grupoId: string(), convite: optional(string()) }),
  errors: [...deviceErrors, ...queueErrors, 'invalid', 'not-admin', 'not-found'],
  schema: type({ appkey: text(), authkey: text(256), message: text(100), usuarios: members(), criarGrupo: trueFlag() }),
  device: deviceByAppkey('device'),
  async handle({ message: subject, usuarios: participants }, { services, device }) {
    const info = await services.messaging.groups.create(device, subject.trim(), participants)
    return { message: 'Grupo criado.', grupoId: info.id, ...(info.inviteCode ? { convite: INVITE_LINK_BASE + info.inviteCode } : {}) }
  },
})

/** Operation 23: join a group by its invite link (or code); answers `grupoId` (also when the group's admins must approve the request first: then the message says so). */
export const joinGroup = defineOperation({
  field: 'entrarConvite',
  name: 'joinGroup',
  summary: 'Join a group by invite link',
  answer: answer({ grupoId: string() }),
  errors: [...deviceErrors, 'invite-invalid', ...queueErrors, 'not-admin'],
  schema: type({ appkey: text(), authkey: text(256), message: falseFlag(), entrarConvite: text(512) }),
  device: deviceByAppkey('device'),
  async handle({ entrarConvite: invite }, { services, device }) {
    const joined = await services.messaging.groups.join(device, invite)
    return { message: joined.awaitingApproval ? JOIN_REQUESTED : 'Entrou no grupo.', grupoId: joined.id }
  },
})

// --- Internal helpers ---

/** Operation 23's message when the group requires admin approval: WhatsApp sent the admins a request. */
const JOIN_REQUESTED = 'Pedido de entrada enviado; aguarda aprovação de um administrador do grupo.'

/** `usuarios`: phone numbers separated by `-` (or `,`), or a JSON list (or one number as a JSON number); 1 to 1 023 entries (more are refused unparsed), distinct phones; an entry that is no string or number (a nested list) is refused, never stringified. */
function members() {
  const phones = coerceWhen(sizedArray(string(), 1, MAX_MEMBERS), isAnything, value => {
    const split = (s: string) => {
      if (s.trim().startsWith('[')) return toArray(s)
      const found: string[] = [] // the entries, trimmed, up to one past the most: the rest is neither split nor parsed
      for (const entry of s.matchAll(/[^-,;\s][^-,;]*/g)) if (found.push(entry[0].trimEnd()) > MAX_MEMBERS) break
      return found
    }
    const items = isStringOrNumber(value) ? split(String(value)) : value
    return Array.isArray(items) && items.length <= MAX_MEMBERS ? [...new Set(items.map(p => (isStringOrNumber(p) && parseRecipient(String(p))) || p))] : items
  })
  const struct = refine(phones, 'members', list => list.every(p => /^\d{8,15}$/.test(p)) || 'expected phone numbers')
  return documentStruct(struct, {
    wire: schema => ({
      anyOf: [
        { type: 'string', description: 'Phone numbers separated by `-` (or `,`), each written without dashes.' },
        { ...schema, minItems: 1, maxItems: MAX_MEMBERS },
      ],
    }),
  })
}
