import Router from '@koa/router'
import type { Context, Next } from 'koa'
import bodyParser from 'koa-bodyparser'
import { StructError, mask } from 'superstruct'
import type { Struct } from 'superstruct'
import { TransportError } from 'zapgate'
import type { Logger } from 'zapgate'
import { parsePhone } from './addresses.ts'
import type { PhoneNetwork } from './phone-network.ts'
import type { LinkTarget } from './sessions.ts'
import { GroupBody, PhoneBody, ScanBody, SendBody, UnlinkBody, messageSchemas } from './sim-schemas.ts'
import type { PhoneMessage } from './types.ts'
import { TRANSPORT_STATUS } from './wire.ts'

/** Options of the simulator routes. */
export interface SimulatorRoutesOptions {
  /**
   * The devices of the account of `authkey` whose id, appkey or name is `ref`; undefined for an
   * unknown or expired authkey. The gateway's `findDevices` is this function. Absent on a simulator
   * server (it has no gateway store): scans go by code or QR, unlinks by device id.
   */
  findDevices?(authkey: string, ref: string): Promise<{ id: string }[] | undefined>
  /** Where unexpected errors are logged. */
  logger?: Logger
}

/**
 * The simulator's HTTP routes under `/_sim` (DESIGN.md, "The simulated network"): a phone scans a
 * device's QR or enters its pairing code, sends messages, reads its inbox, gets a group's invite link.
 * Served for any PhoneNetwork: the simulated one, or the local WhatsApp peer (zapgate/adapters/wa-peer).
 * JSON and form bodies are parsed here only; errors answer `{status, message}`.
 */
export function simulatorRoutes(network: PhoneNetwork, options: SimulatorRoutesOptions): Router {
  const router = new Router({ prefix: '/_sim' })
  router.use(renderErrors(options.logger))
  router.use(bodyParser({ enableTypes: ['json', 'form'], jsonLimit: '2mb', formLimit: '2mb' }))

  router.post('/scan', async ctx => {
    const { phone, authkey, appkey, qr, code } = parse(ctx, ScanBody)
    let target: LinkTarget
    if (qr) target = { qr }
    else if (code) target = { code }
    else if (appkey && !options.findDevices) throw new SimError(400, APART)
    else if (appkey) target = { deviceId: await findDevice(options, authkey, appkey) }
    else throw new SimError(400, options.findDevices ? 'appkey (with authkey), qr or code is required' : 'qr or code is required')
    await network.scan(target, phone)
    reply(ctx, { message: 'device linked', phone: parsePhone(phone) })
  })

  router.post('/send', async ctx => {
    const { type } = parse(ctx, SendBody)
    const { from, to, ...message } = parse(ctx, messageSchemas[type]) as { from: string; to: string } & PhoneMessage
    const id = await network.sendFromPhone(from, to, message as PhoneMessage)
    reply(ctx, { message: 'message sent', id })
  })

  router.get('/inbox/:phone', ctx => {
    const phone = parsePhone(ctx.params.phone)
    if (!phone) throw new SimError(400, `not a phone number: ${ctx.params.phone}`)
    ctx.body = network.inbox(phone)
  })

  router.get('/invite/:groupId', ctx => {
    const id = ctx.params.groupId.includes('@') ? ctx.params.groupId : `${ctx.params.groupId}@g.us`
    if (!network.inviteLink) throw new SimError(501, NO_GROUPS)
    const link = network.inviteLink(id)
    if (!link) throw new SimError(404, 'group not found')
    reply(ctx, { message: 'invite link', link, code: link.slice(link.lastIndexOf('/') + 1) })
  })

  router.post('/groups', async ctx => {
    if (!network.createGroup || !network.inviteLink) throw new SimError(501, NO_GROUPS)
    const { creator, subject, members, description } = parse(ctx, GroupBody)
    const group = network.createGroup(creator, subject, members, { description })
    reply(ctx, { message: 'group created', group, link: network.inviteLink(group.id) })
  })

  router.post('/phones', async ctx => {
    const { phone, lid, pushName, hidePhone } = parse(ctx, PhoneBody)
    const assigned = network.registerPhone(phone, { lid: lid === 'true' ? true : lid === 'false' ? undefined : lid || undefined, pushName, hidePhone })
    reply(ctx, { message: 'phone registered', phone: parsePhone(phone), ...(assigned ? { lid: assigned } : {}) })
  })

  router.get('/stats', ctx => {
    ctx.body = network.stats()
  })

  router.post('/unlink', async ctx => {
    const { authkey, appkey, deviceId: id } = parse(ctx, UnlinkBody)
    if (!options.findDevices && !id) throw new SimError(400, 'this simulator runs apart from the gateway: unlink by {deviceId} (the id operation 4 answers)')
    if (options.findDevices && !appkey) throw new SimError(400, 'appkey (with authkey) is required')
    const deviceId = options.findDevices ? await findDevice(options, authkey, appkey!) : id!
    if (!(await network.unlink(deviceId))) throw new SimError(404, 'device not linked')
    reply(ctx, { message: 'device unlinked' })
  })

  return router
}

// --- Internal helpers ---

/** An error of the simulator routes, answered as `{status, message}`. */
class SimError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

/** What a network without groups answers on the group routes. */
const NO_GROUPS = 'this network has no groups'

/** Why a simulator server (apart from the gateway) cannot scan by appkey. */
const APART =
  'this simulator runs apart from the gateway and cannot find a device by appkey: scan by {code, phone} (operation 3 with a phone answers a pairing code) or {qr, phone} (the text of the QR)'

/** The one device of the account of `authkey` whose id, appkey or name is `ref`. */
async function findDevice(options: SimulatorRoutesOptions, authkey: string | undefined, ref: string): Promise<string> {
  if (!authkey) throw new SimError(400, 'authkey is required to find a device by appkey')
  const devices = await options.findDevices!(authkey, ref)
  if (!devices) throw new SimError(401, 'unknown or expired authkey')
  if (devices.length === 0) throw new SimError(404, 'device not found')
  if (devices.length > 1)
    throw new SimError(409, `${JSON.stringify(ref)} names ${devices.length} devices of the account (by id, appkey or name): use the device id`)
  return devices[0].id
}

function renderErrors(logger?: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next()
    } catch (err) {
      const { status, message } = describeError(err)
      if (status >= 500) logger?.error({ err }, 'simulator route failed')
      ctx.status = status
      ctx.body = { status, message }
    }
  }
}

function describeError(err: unknown): { status: number; message: string } {
  if (err instanceof SimError) return { status: err.status, message: err.message }
  if (err instanceof TransportError) return { status: TRANSPORT_STATUS[err.code] ?? 502, message: err.message }
  if (err instanceof StructError) {
    const path = err.path.join('.')
    return { status: 400, message: path ? `${path}: ${err.message}` : err.message }
  }
  const status = (err as { status?: unknown })?.status
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const exposed = (err as { expose?: boolean }).expose && err instanceof Error
    return { status, message: exposed ? err.message : 'bad request' }
  }
  return { status: 500, message: 'internal error' }
}

/** The body checked against `schema` (coerced; unknown fields dropped). */
function parse<T>(ctx: Context, schema: Struct<T, any>): T {
  const body = ctx.request.body
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new SimError(400, 'the body must be a JSON object')
  return mask(body, schema)
}

function reply(ctx: Context, body: Record<string, unknown>): void {
  ctx.body = { status: 200, ...body }
}
