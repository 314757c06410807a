import { GatewayError } from '../../errors.ts'
import { TransportError, type GroupInfo, type GroupRef, type Transport } from '../../ports/transport.ts'
import type { Device } from '../devices.ts'
import type { Messenger } from './messenger.ts'

/** Where invite links point. */
export const INVITE_LINK_BASE = 'https://chat.whatsapp.com/'

/** Group operations of a device (information, creation, joining by invite), through the device's send queue. */
export class Groups {
  constructor(
    private readonly transport: Transport,
    private readonly messenger: Messenger,
  ) {}

  /** A group by id or invite link/code; 404 `Grupo não encontrado.` when there is none. */
  async info(device: Device, ref: string): Promise<GroupInfo> {
    const groupRef = parseGroupRef(ref)
    if (!groupRef) throw new GatewayError('group-not-found')
    const info = await this.messenger.call(device, () => this.transport.groupInfo(device.id, groupRef)).catch(notFound('group-not-found'))
    if (!info) throw new GatewayError('group-not-found')
    return info
  }

  /** Create a group with the device as admin and `participants` (phone digits) as members. */
  create(device: Device, subject: string, participants: string[]): Promise<GroupInfo> {
    return this.messenger.call(device, () => this.transport.groupCreate(device.id, subject, participants))
  }

  /** Join by invite link or code; the group id (and whether the group's admins must still approve), or 404 `Convite inválido ou expirado.` */
  async join(device: Device, invite: string): Promise<{ id: string; awaitingApproval: boolean }> {
    const code = parseInviteCode(invite)
    if (!code) throw new GatewayError('invite-invalid')
    const joined = await this.messenger.call(device, () => this.transport.groupJoin(device.id, code)).catch(notFound('invite-invalid'))
    if (!joined) throw new GatewayError('invite-invalid')
    return typeof joined === 'string' ? { id: joined, awaitingApproval: false } : { id: joined.id, awaitingApproval: true }
  }
}

/** A group id (`<digits>@g.us`, or the bare digits of one) or an invite link/code; undefined otherwise. */
function parseGroupRef(value: string): GroupRef | undefined {
  const text = value.trim()
  const id = /^(\d{10,30}(?:-\d{5,15})?)(@g\.us)?$/i.exec(text)
  if (id) return { id: `${id[1]}@g.us` }
  const code = parseInviteCode(text)
  return code ? { invite: code } : undefined
}

/** The code of an invite link (`https://chat.whatsapp.com/<code>`, query ignored) or a bare code. */
function parseInviteCode(value: string): string | undefined {
  let text = value.trim()
  const link = /^(?:https?:\/\/)?chat\.whatsapp\.com\/(?:invite\/)?([^?#/\s]+)\/?(?:[?#].*)?$/i.exec(text)
  if (link) text = link[1]
  return /^[A-Za-z0-9]{6,64}$/.test(text) ? text : undefined
}

/** Map the network's "no such group/invite" to the operation's 404. */
function notFound(code: 'group-not-found' | 'invite-invalid') {
  return (err: unknown): never => {
    if (err instanceof TransportError && (err.code === 'not-found' || err.code === 'invalid')) throw new GatewayError(code, { cause: err })
    throw err
  }
}
