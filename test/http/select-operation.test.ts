import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { operationSelector } from '../../src/http/select-operation.ts'
import { operationTable } from '../../src/operations/table.ts'
import type { UploadedFile } from '../../src/operations/operation.ts'

/**
 * The operation a body selects on its path: the first of the path's list (the table's precedence)
 * whose distinguishing field is present (a blank or null value is absent; a file uploaded under the
 * field's name is present), else the path's fallback.
 */
const entryOf = (path: string) => operationTable.find(entry => entry.path === path)!
const selected = (path: string, fields: Record<string, unknown>, uploads: string[] = []) =>
  operationSelector(entryOf(path))({ fields, uploads: new Map(uploads.map(name => [name, {} as UploadedFile])) })?.name
const keys = { appkey: 'loja', authkey: 'k', to: '5511988880002' }

test('a text send (no distinguishing field) is the fallback', () => {
  assert.is(selected('/api/create-message', { ...keys, message: 'oi' }), 'sendText')
})

test('the first of the list wins whatever the order of the body', () => {
  assert.is(selected('/api/create-message', { ...keys, file: 'https://example.com/a.pdf', buttons: [{}], message: 'x' }), 'sendButtons')
  assert.is(selected('/api/create-message', { buttons: [{}], ...keys, file: 'https://example.com/a.pdf' }), 'sendButtons')
  assert.is(selected('/api/create-message', { ...keys, file: 'https://example.com/a.pdf', listaAgendamento: 'true' }), 'listSchedules')
  assert.is(selected('/api/groups', { ...keys, entrarConvite: 'y', infoConvite: 'x' }), 'groupInfo')
})

test('a blank or null field is absent; one field of a pair is enough', () => {
  assert.is(selected('/api/create-message', { ...keys, message: 'x', buttons: [{}], file: '  ' }), 'sendButtons')
  assert.is(selected('/api/create-message', { ...keys, message: 'x', file: null }), 'sendText')
  assert.is(selected('/api/create-message', { ...keys, longitude: '-46.6' }), 'sendLocation')
})

test('a blank field of an operation whose message is fixed to false selects it when message is false: the text "false" is never sent', () => {
  for (const field of ['verificarOTP', 'deleteID', 'listaAgendamento']) {
    for (const message of ['false', ' FALSE ', false]) {
      const chosen = selected('/api/create-message', { ...keys, message, [field]: '' })
      assert.is.not(chosen, 'sendText', `${field}: "" with message ${JSON.stringify(message)}`)
    }
    assert.is(selected('/api/create-message', { ...keys, message: 'oi', [field]: '' }), 'sendText', `${field} blank with a real text: the text`)
    assert.is(selected('/api/create-message', { ...keys, message: '0', [field]: '' }), 'sendText', `${field} blank with the text "0": the text`)
  }
  assert.is(selected('/api/create-message', { ...keys, message: 'false', verificarOTP: ' ' }), 'verifyOtp')
  assert.is(selected('/api/create-message', { ...keys, message: 'false', deleteID: null }), 'deleteMessage')
  assert.is(selected('/api/create-message', { ...keys, message: 'false', file: '' }), 'sendText', 'a blank field of an operation that takes a message: absent')
  assert.is(
    selected('/api/create-message', { ...keys, message: 'false', verificarOTP: '', latitude: '-23.5', longitude: '-46.6' }),
    'sendLocation',
    'a present field wins',
  )
})

test('a file uploaded under the field name selects its operation; a path without a fallback selects nothing', () => {
  assert.is(selected('/api/create-message', { ...keys, message: 'a.pdf' }, ['file']), 'sendMedia')
  assert.is(selected('/api/create-message', { ...keys, buttons: [{}] }, ['file']), 'sendButtons')
  assert.is(selected('/api/developer', { authkey: 'k', message: 'loja' }), undefined)
})

test('a distinguishing field of another path selects nothing here', () => {
  assert.is(selected('/api/create-message', { ...keys, message: 'oi', infoConvite: 'x', checkDispositivo: '1' }), 'sendText')
  assert.is(selected('/api/groups', { ...keys, file: 'https://example.com/a.pdf', buttons: [{}] }), undefined)
})

test.run()
