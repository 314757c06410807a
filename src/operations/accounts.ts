import { literal, object, refine, string, type } from '../schema/structs.ts'
import { coerceWhen, isString, lowerKeyword } from '../schema/coerce-when.ts'
import { answer, defineOperation } from './operation.ts'
import { phone, text } from '../schema/fields.ts'
import { documentStruct } from '../schema/struct-schema.ts'
import { deviceErrors } from './error-answers.ts'
import { normalEmail } from '../domain/accounts.ts'

/** Passwords shorter than this are refused. */
const MIN_PASSWORD = 6

/** local@domain.tld, with no space or control character (NUL, DEL, C1) anywhere once trimmed. */
const emailShape = /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+\.[^\s@\p{Cc}]+$/u

const email = documentStruct(
  refine(text(254), 'email', v => emailShape.test(normalEmail(v)) || 'expected an e-mail address'), // as the account keeps it: an address of invisible characters is none
  { format: 'email' },
)

/** Operation 1: register a user account (`auth: "registrar"`). */
export const registerUser = defineOperation({
  field: 'auth',
  name: 'registerUser',
  summary: 'Register a user account and obtain its authkey',
  answer: answer({ data: object({ nome: string(), email: string(), telefone: string(), authkey: string(), expiracao: string(), plano: string() }) }),
  errors: ['invalid-input', 'email-taken', 'rate-limited'],
  schema: type({
    auth: coerceWhen(literal('registrar'), isString, lowerKeyword),
    email,
    senha: refine(text(1024), 'password', v => v.length >= MIN_PASSWORD || `at least ${MIN_PASSWORD} characters`),
    nome: text(200),
    telefone: phone(),
    plano: text(64),
  }),
  async handle({ email, senha, nome, telefone, plano }, { services, clientIp }) {
    await services.rateLimits.registration(clientIp)
    const { account, authkey } = await services.accounts.register({ email, password: senha, name: nome, phone: telefone, planId: plano.trim() })
    const { name, phone, expiresOn, planName } = account
    return {
      message: 'Usuário registrado com sucesso.',
      data: { nome: name, email: account.email, telefone: phone, authkey, expiracao: expiresOn, plano: planName },
    }
  },
})

/** Operation 2: create an AI agent on a device of the account. */
export const createAgent = defineOperation({
  name: 'createAgent',
  summary: 'Create an AI agent hosted by a device',
  answer: answer({ agent_id: string() }),
  errors: deviceErrors,
  answers: { 'invalid-input': { status: 400, message: 'validation.required' }, unauthenticated: { status: 401, message: 'Authkey invalida ou expirada.' } },
  schema: type({ authkey: text(Infinity), device: text(), agent_name: text(200) }), // a key too long to be one is a wrong key (401), not a missing one
  device: { ref: 'device' },
  async handle({ agent_name }, { services, account, device }) {
    const agent = await services.agents.create(account, device, agent_name.trim())
    return { message: 'Agente criado com sucesso.', agent_id: agent.id }
  },
})
