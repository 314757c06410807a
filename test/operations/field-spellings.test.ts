import assert from 'node:assert/strict'
import { DEVICE_PHONE, FRIEND, assertOk, sendingSuite } from '../helpers/messaging.ts'

const test = sendingSuite('field spellings: numbers as their text')

test('create group reads usuarios given as a JSON number as its digits, like every other field', async ({ g }) => {
  const body = assertOk(await g.groups({ message: 'Equipe', usuarios: Number(FRIEND), criarGrupo: 'true' }))
  assert.deepEqual(
    g.network.group(body.grupoId)!.participants.map(p => p.phone),
    [DEVICE_PHONE, FRIEND],
  )
})

test.run()
