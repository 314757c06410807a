import assert from 'node:assert/strict'
import { createGateway } from '../../../src/index.ts'
import { MemoryNetwork, memoryTransport } from '../../../adapters/transport-memory/index.ts'
import type { WaPeer } from '../../../adapters/wa-peer/index.ts'
import { waitFor } from '../gateway.ts'
import type { Answer, Encoding } from '../http.ts'
import { startReceiver, type Receiver } from '../receiver.ts'
import { register, servedWithPhones, startRealStack, SHOP } from '../real-stack.ts'

/**
 * One world of the conformance suite: a gateway served over HTTP with the phone routes (`/_sim`,
 * docs/simulator.md) beside its own, a webhook receiver, an account and a device `loja` linked to
 * SHOP. The cases see only HTTP: the gateway's API, the phone routes and the webhooks, so the same
 * case runs on the simulated network and on the real Baileys stack against the local WhatsApp peer.
 */
export interface World {
  network: NetworkName
  url: string
  receiver: Receiver
  authkey: string
  appkey: string
  deviceId: string
  /** The LID of SHOP, the device's phone (every phone has one on the real network; the simulated one gives SHOP one). */
  shopLid: string
  /** POST to any path of the server (`/api/...`, `/_sim/...`). */
  post(path: string, body: Record<string, unknown>, encoding?: Encoding): Promise<Answer>
  /** What only the real stack can do: its peer (undefined on the simulated network). */
  peer?: WaPeer
  close(): Promise<void>
}

/** The two networks every case runs on. */
export type NetworkName = 'memory' | 'real-stack'

/** The phone of the device `loja`, and the phones the cases talk to. */
export { SHOP }
export const FRIEND = '5511988880002'
export const OTHER = '5511977770003'

/** The simulated network in process (as `GATEWAY_TRANSPORT=memory npm start` runs it). */
export async function memoryWorld(): Promise<World> {
  const network = new MemoryNetwork()
  const gateway = await createGateway({ transport: memoryTransport({ network }), allowPrivateUrls: true })
  const served = await servedWithPhones(gateway, network)
  const receiver = await startReceiver()
  const world = {
    network: 'memory',
    url: served.url,
    receiver,
    post: served.post,
    async close() {
      await served.stop()
      await receiver.stop()
    },
  } as World
  return linked(world)
}

/** The real Baileys stack against the local WhatsApp peer in process (as `GATEWAY_WA_PEER=local npm start` runs it), media host included. */
export async function realStackWorld(): Promise<World> {
  const stack = await startRealStack({ peer: { media: true }, link: false })
  const world = {
    network: 'real-stack',
    url: stack.t.url,
    receiver: stack.receiver,
    authkey: stack.authkey,
    post: stack.t.post,
    peer: stack.peer,
    close: () => stack.close(),
  } as World
  return linked(world)
}

/** POST /api/create-message with the world's keys (overridable) and `body`. */
export function send(world: World, body: Record<string, unknown>, encoding?: Encoding): Promise<Answer> {
  return world.post('/api/create-message', { appkey: world.appkey, authkey: world.authkey, ...body }, encoding)
}

/** `POST /_sim/send` from a phone; the message id (asserting 200). */
export async function phoneSends(world: Pick<World, 'post'>, body: Record<string, unknown>): Promise<string> {
  const sent = await world.post('/_sim/send', body)
  assert.equal(sent.status, 200, sent.text)
  return sent.body.id
}

/** `GET /_sim/inbox/:phone` without the volatile `timestamp`. */
export async function inbox(world: Pick<World, 'url'>, phone: string): Promise<Record<string, any>[]> {
  const entries = (await (await fetch(`${world.url}/_sim/inbox/${phone}`)).json()) as Record<string, any>[]
  return entries.map(({ timestamp: _t, ...entry }) => entry)
}

/** The inbox entry of message `id` of `phone`, once it arrived (the real stack decrypts asynchronously). */
export async function arrived(world: Pick<World, 'url'>, phone: string, id: string): Promise<Record<string, any>> {
  let entry: Record<string, any> | undefined
  await waitFor(async () => !!(entry = (await inbox(world, phone)).find(e => e.id === id || e.target === id)), 15_000, `${id} in the inbox of ${phone}`)
  return entry!
}

/** The webhook bodies of these message ids, in the order given (waiting for all of them). */
export async function hooks(world: Pick<World, 'receiver'>, ids: string[]): Promise<any[]> {
  const payloads = () => world.receiver.hooks.map(h => h.payload)
  await waitFor(() => ids.every(id => payloads().some(p => p?.idMessagem === id)), 15_000, `webhooks for ${ids.join(', ')}`)
  return ids.map(id => payloads().find(p => p?.idMessagem === id))
}

/** The `dispositivo` operation 5 answers for `name`. */
export async function status(world: World, name = 'loja'): Promise<Record<string, any>> {
  return (await world.post('/api/developer', { authkey: world.authkey, message: name, checkDispositivo: 'true' })).body?.dispositivo ?? {}
}

/** Create device `name` (operation 3, webhook: the world's receiver) and let `phone` scan it through `/_sim/scan` by appkey. */
export async function linkDevice(world: World, name: string, phone: string): Promise<{ id: string; appkey: string }> {
  const created = await world.post('/api/v2/qrcode', { authkey: world.authkey, setAppkey: name, webhook: world.receiver.url })
  assert.equal(created.status, 200, created.text)
  const scanned = await world.post('/_sim/scan', { authkey: world.authkey, appkey: name, phone })
  assert.deepEqual([scanned.status, scanned.body?.message], [200, 'device linked'], scanned.text)
  await waitFor(async () => (await status(world, name)).conectado === true, 10_000, `${name} connected`)
  return { id: created.body.id, appkey: created.body.appkey }
}

// --- Internal helpers ---

/** Register the world's account and the phones FRIEND (`Amiga`), OTHER and SHOP (with its LID), and link its device `loja` to SHOP. */
async function linked(world: World): Promise<World> {
  try {
    world.authkey ??= await register(world)
    for (const profile of [{ phone: FRIEND, pushName: 'Amiga' }, { phone: OTHER }, { phone: SHOP, lid: true }]) {
      const answer = await world.post('/_sim/phones', profile)
      assert.equal(answer.status, 200, answer.text)
      if (profile.phone === SHOP) world.shopLid = answer.body.lid
    }
    const device = await linkDevice(world, 'loja', SHOP)
    world.appkey = device.appkey
    world.deviceId = device.id
    return world
  } catch (err) {
    await world.close()
    throw err
  }
}
