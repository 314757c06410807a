import type { ServerProcess } from './process.ts'

/** An account and its connected devices on a bench gateway. */
export interface Fixture {
  authkey: string
  /** In the order they were created. */
  devices: { appkey: string; phone: string }[]
}

/** How accountWithDevices links the devices. */
export interface LinkOptions {
  /** The devices' webhook URL (op 3's `webhook` field). */
  webhook?: string
  /**
   * `qr` (default): op 3 renders a QR code, then the phone scans it by the device's appkey. `code`:
   * op 3 with the phone's number answers a pairing code, which the phone enters. Same linked device
   * in the end, but `code` is about 5x cheaper (no PNG to render, and the simulator's scan by appkey
   * searches every device): use it to link hundreds of devices.
   */
  by?: 'qr' | 'code'
}

/** Register one account and link `devices` devices (op 3, then a simulated phone links each). */
export async function accountWithDevices(server: ServerProcess, devices: number, options: LinkOptions = {}): Promise<Fixture> {
  const { webhook, by = 'qr' } = options
  const registered = await server.post('/api/auth', {
    auth: 'registrar',
    nome: 'Bench',
    email: `bench-${Date.now()}@example.com`,
    senha: 'senha-bench',
    telefone: '5511900000000',
    plano: '1',
  })
  const authkey = registered.data.authkey as string
  const linked: Fixture['devices'] = []
  for (let i = 0; i < devices; i++) {
    const phone = `55119${String(10_000_000 + i)}`
    const created = await server.post('/api/v2/qrcode', {
      authkey,
      setAppkey: `bench-${i}`,
      ...(webhook ? { webhook } : {}),
      ...(by === 'code' ? { phone } : {}),
    })
    await server.post('/_sim/scan', by === 'code' ? { code: created.code, phone } : { authkey, appkey: created.appkey, phone })
    linked.push({ appkey: created.appkey, phone })
  }
  return { authkey, devices: linked }
}

/** The body of an authenticated send text (op 8) from the fixture's `device`-th device. */
export function sendTextBody(fixture: Fixture, device = 0): Record<string, string> {
  return { appkey: fixture.devices[device].appkey, authkey: fixture.authkey, to: '5511988887777', message: 'Olá! Seu pedido 1234 saiu para entrega.' }
}
