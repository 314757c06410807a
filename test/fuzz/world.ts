import { MediaFetchError, type GatewayOptions, type MediaFetcher, type WebhookSender } from '../../src/index.ts'
import { internalsOf } from '../../src/internals.ts'
import { checkUrl } from '../../src/security/url-policy.ts'
import { startGateway, type TestGateway } from '../helpers/gateway.ts'
import { DEVICE_PHONE, FRIEND, OTHER } from '../helpers/messaging.ts'
import { PNG } from '../helpers/samples.ts'

/** What the fuzzed gateway knows, to build plausible values. */
export interface FuzzWorld {
  t: TestGateway
  authkey: string
  otherAuthkey: string
  appkey: string
  deviceId: string
  groupId: string
  invite: string
  sentId: string
  receivedId: string
}

/** A gateway on the simulated network with one account, one linked device, a group and messages. */
export async function fuzzWorld(options: GatewayOptions = {}): Promise<FuzzWorld> {
  const t = await startGateway({ media: stubMedia, webhooks: stubWebhooks, rateLimit: false, ...options })
  const { authkey } = await t.register({ email: 'fuzz@example.com' })
  const { authkey: otherAuthkey } = await t.register({ email: 'fuzz-other@example.com' })
  const device = await t.linkedDevice(authkey, 'loja', DEVICE_PHONE)
  const group = t.network.createGroup(FRIEND, 'Grupo', [DEVICE_PHONE, OTHER])
  const receivedId = await t.network.sendFromPhone(FRIEND, DEVICE_PHONE, { type: 'text', text: 'oi' })
  const sent = await t.post('/api/create-message', { appkey: device.appkey, authkey, to: FRIEND, message: 'olá' })
  return {
    t,
    authkey,
    otherAuthkey,
    appkey: device.appkey,
    deviceId: device.id,
    groupId: group.id,
    invite: t.network.inviteLink(group.id)!,
    sentId: sent.body.id,
    receivedId,
  }
}

/** Put the fuzzed device back when a run deleted or unlinked it (operation 6 is fuzzed too). */
export async function restoreDevice(world: FuzzWorld): Promise<void> {
  const services = internalsOf(world.t.gateway)
  const account = await services.accounts.authenticate(world.authkey)
  const device = account && (await services.devices.find(account, 'loja'))
  if (device && (await services.devices.status(device)).connected) return
  const linked = await world.t.linkedDevice(world.authkey, 'loja', DEVICE_PHONE)
  world.deviceId = linked.id
}

// --- Internal helpers ---

const stubMedia: MediaFetcher = {
  async fetch(url) {
    const checked = checkUrl(url, { allowPrivate: false })
    if ('refused' in checked) throw new MediaFetchError('refused', `refused (${checked.refused})`)
    if (url.includes('fail')) throw new MediaFetchError('unreachable', 'simulated failure')
    return { data: PNG, contentType: 'image/png', fileName: 'a.png' }
  },
}

const stubWebhooks: WebhookSender = {
  async send() {
    return { status: 200 }
  },
}
