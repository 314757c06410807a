import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { assert as conforms } from 'superstruct'
import { operations } from '../../src/operations/table.ts'
import type {
  AddDeviceAnswer,
  AddDeviceRequest,
  CreateGroupRequest,
  DeviceStatusAnswer,
  DeviceStatusRequest,
  OperationAnswer,
  OperationName,
  OperationRequest,
  RegisterUserAnswer,
  RegisterUserRequest,
  SendButtonsRequest,
  SendTextAnswer,
  SendTextRequest,
  VerifyOtpAnswer,
} from '../../src/client.ts'
import { startGateway } from '../helpers/gateway.ts'

/**
 * The exported client types, used the way a TypeScript host uses them. `npm run typecheck` (tsc over
 * test/ too) fails when the types drift: a sample that stops fitting its request type, an answer
 * field that disappears, or a type that gets so loose the `@ts-expect-error` lines stop erring.
 * At run time the same samples go to a gateway and its answers are checked against the structs the
 * types come from.
 */

const register: RegisterUserRequest = { auth: 'registrar', nome: 'Ana', email: 'ana@example.com', senha: 's3nha-forte', telefone: '+5511999990000', plano: '1' }
const addDevice = (authkey: string): AddDeviceRequest => ({ authkey, message: 'recepcao', conecteQR: 'true' })
const status = (authkey: string): DeviceStatusRequest => ({ authkey, message: 'recepcao', checkDispositivo: true })
const text = (authkey: string): SendTextRequest => ({ appkey: 'recepcao', authkey, to: '+5511988880002', message: 'Olá!' })

// Requests as clients send them: flags in any spelling, lists as arrays or as text.
export const flags: AddDeviceRequest[] = [
  { authkey: 'k', message: 'a', conecteQR: true },
  { authkey: 'k', message: 'a', conecteQR: '1' },
]
export const members: CreateGroupRequest[] = [
  { appkey: 'a', authkey: 'k', message: 'Equipe', usuarios: '5511988880002-5511977770003', criarGrupo: 'true' },
  { appkey: 'a', authkey: 'k', message: 'Equipe', usuarios: ['5511988880002'], criarGrupo: 'true' },
]
export const buttons: SendButtonsRequest = {
  appkey: 'a',
  authkey: 'k',
  to: '5511988880002',
  message: 'Como podemos ajudar?',
  buttons: [
    { type: 'replyButton', displaytext: 'Pedido', id: 'pedido' },
    { type: 'urlButton', displaytext: 'Site', action: 'https://example.com' },
  ],
}

// What the types refuse.
// @ts-expect-error a flag that must be true cannot be "yes"
export const badFlag: AddDeviceRequest = { authkey: 'k', message: 'a', conecteQR: 'yes' }
// @ts-expect-error sending a text needs a recipient
export const noRecipient: SendTextRequest = { appkey: 'a', authkey: 'k', message: 'oi' }
// @ts-expect-error a reply button has no action; a URL button is not a reply button
export const badButton: SendButtonsRequest = { appkey: 'a', authkey: 'k', to: '1', message: 'x', buttons: [{ type: 'replyButton', action: 'x' }] }
// @ts-expect-error there is no such operation
export type Unknown = OperationRequest<'sendFax'>

// Answers: the fields a host reads have the types it expects.
export type Estado = DeviceStatusAnswer['dispositivo']['estado']
export const estado: Estado[] = ['closed', 'connecting', 'linking', 'open', 'replaced', 'logged-out']
// @ts-expect-error a session state the gateway never reports
export const wrongEstado: Estado = 'connected'
export const valid: VerifyOtpAnswer['valid'] = true
export const named: OperationAnswer<'sendText'> extends SendTextAnswer ? true : false = true

const types = suite('exported client types')

types('typed samples are accepted by a running gateway, and its answers fit the typed answers', async () => {
  const t = await startGateway()
  try {
    const registered: RegisterUserAnswer = conformsTo('registerUser', (await t.post('/api/auth', { ...register })).body)
    const authkey: string = registered.data.authkey
    const added: AddDeviceAnswer = conformsTo('addDevice', (await t.post('/api/developer', { ...addDevice(authkey) })).body)
    assert.match(added.link, /\/qr\//)
    const device: DeviceStatusAnswer = conformsTo('deviceStatus', (await t.post('/api/developer', { ...status(authkey) })).body)
    assert.is(device.dispositivo.estado, 'linking')
    await t.network.scan({ deviceId: added.id }, '5511988887777')
    await t.network.settled()
    const sent: SendTextAnswer = conformsTo('sendText', (await t.post('/api/create-message', { ...text(authkey) })).body)
    assert.match(sent.id ?? '', /^3EB0/)
  } finally {
    await t.stop()
  }
})

types.run()

/** The body, checked against the answer struct of `name` (which the answer type is inferred from). */
function conformsTo<N extends OperationName>(name: N, body: unknown): OperationAnswer<N> {
  conforms(body, operations[name].answer as never)
  return body as OperationAnswer<N>
}
