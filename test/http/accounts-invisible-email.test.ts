import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'
import type { Answer } from '../helpers/http.ts'
import { internalsOf } from '../../src/internals.ts'
import { hashKey } from '../../src/security/keys.ts'

/**
 * An e-mail is unique per account (spec, operation 1: 409 for an address already registered). An address
 * pasted from a page or a chat often carries characters that do not show: a zero-width space, a soft
 * hyphen (a hyphenated page), a direction mark. The user sees one address; it must be one account.
 */
const test = suite<{ t: TestGateway }>('operation 1: an e-mail with characters that do not show is the address as it shows')
test.before(async ctx => {
  ctx.t = await startGateway({})
})
test.after(ctx => ctx.t.stop())

const valid = { auth: 'registrar', nome: 'Ana Souza', senha: 's3nha-forte', telefone: '+55 (11) 99999-0000', plano: '1' }

function answers(answer: Answer, status: number, message: string) {
  assert.is(answer.body?.status, status, `body status of ${answer.text}`)
  assert.is(answer.status, status, `HTTP code of ${answer.text}`)
  assert.is(answer.body?.message, message)
}

test('409 for the address with or without invisible characters; the host finds it by the address it sees', async ({ t }) => {
  const first = await t.post('/api/auth', { ...valid, email: 'ana.lima\u200b@example.com' })
  assert.is(first.status, 200, first.text)
  assert.is(first.body.data.email, 'ana.lima@example.com', 'the account keeps the address as it shows')
  // Zero-width space, soft hyphen, left-to-right mark, word joiner, zero-width no-break space.
  for (const seen of ['ana.lima@example.com', 'ana.li\u00adma@example.com', '\u200eana.lima@EXAMPLE.com', 'ana.lima@exam\u2060ple.com\ufeff'])
    answers(await t.post('/api/auth', { ...valid, email: seen }), 409, 'Usuario ja registrado com este e-mail.')
  assert.is((await t.gateway.accounts.get('ana.lima@example.com'))?.name, 'Ana Souza', 'the host finds the account by the address it sees')
  assert.is((await t.gateway.accounts.get('ana.lima\u200b@example.com'))?.name, 'Ana Souza', 'and by the form it was registered with')
})

test('an address that is nothing but invisible characters before its @ is no address: 401 validation.required', async ({ t }) => {
  answers(await t.post('/api/auth', { ...valid, email: '\u200b\u00ad@example.com' }), 401, 'validation.required')
})

test('an entry indexed with its invisible character, before they were dropped, is still found by that form, not as another account', async ({ t }) => {
  const bia = await t.post('/api/auth', { ...valid, nome: 'Bia', email: 'bia@example.com' })
  assert.is(bia.status, 200, bia.text)
  const { storage } = internalsOf(t.gateway)
  await storage.set(`account-email:${hashKey('bia\u200b@example.com')}`, await storage.get(`account-email:${hashKey('ana.lima@example.com')}`))
  assert.is((await t.gateway.accounts.get('bia\u200b@example.com'))?.name, 'Ana Souza')
  assert.is((await t.gateway.accounts.get('bia@example.com'))?.name, 'Bia')
})

test.run()
