import type { FakeBaileys } from './fake-baileys/index.ts'
import { waitFor, type TestGateway } from './gateway.ts'

/**
 * Add device `name` to the account of `authkey` (with `webhook` when given), link it on the fake
 * Baileys network as `phone`, and wait until operation 5 reports it connected.
 */
export async function connectedBaileysDevice(
  t: TestGateway,
  fake: FakeBaileys,
  authkey: string,
  { name = 'loja', phone = '5511999990000', webhook }: { name?: string; phone?: string; webhook?: string } = {},
) {
  const device = await t.addDevice(authkey, name, webhook ? { webhook } : {})
  await fake.completeLink(device.id, phone)
  await waitFor(
    async () => (await t.post('/api/developer', { authkey, message: name, checkDispositivo: 'true' })).body.dispositivo?.conectado === true,
    5_000,
    'connected',
  )
  return device
}
