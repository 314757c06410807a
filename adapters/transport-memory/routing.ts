import { TransportError } from 'zapgate'
import type { GroupRegistry } from './groups.ts'
import type { Destination, LoggedMessage, Post } from './post.ts'

/**
 * Where a message goes and what it may refer to: the checks the network makes on every send, over
 * its post office (addresses, message log) and its groups.
 */

/** Resolve `to` for `sender`: a phone, or a group `sender` belongs to (with its members now). */
export function destinationOf(post: Post, groups: GroupRegistry, sender: string, to: string): Destination {
  const resolved = post.resolve(to)
  if (!resolved) {
    if (typeof to === 'string' && to.trim().endsWith('@lid')) throw new TransportError('not-found', `unknown user ${to}`)
    throw new TransportError('invalid', `not a phone number or group id: ${String(to)}`)
  }
  if ('phone' in resolved) return resolved
  const group = groups.get(resolved.group)
  if (!group?.members.has(sender)) throw new TransportError('not-found', `no group ${resolved.group} with this member`)
  return { group: group.id, members: [...group.members.keys()] }
}

/** A reaction, delete or button tap must name a message of that chat (deletes: one the sender sent; a tap: one of its quick replies, a list row any id). */
export function checkTarget(
  post: Post,
  groups: GroupRegistry,
  sender: string,
  destination: Destination,
  id: string | undefined,
  kind: string,
  tap?: { buttonId: string; list?: boolean },
): void {
  const message = typeof id === 'string' ? post.message(id) : undefined
  const chat = 'group' in destination ? destination.group : destination.phone
  const inChat =
    message !== undefined &&
    ('group' in destination ? message.to === chat : (message.from === sender && message.to === chat) || (message.from === chat && message.to === sender))
  if (!message || !inChat) throw new TransportError('not-found', `no message ${String(id)} in that chat`)
  if (kind === 'delete' && message.from !== sender) throw new TransportError('invalid', 'only the sender can delete a message')
  if (kind === 'button' && (!receivedBy(groups, message, sender) || (message.type !== 'buttons' && message.type !== 'carousel'))) {
    throw new TransportError('invalid', `message ${id} has no buttons for this phone`)
  }
  // A phone taps only what the message shows as a quick reply (a URL or call button opens a page or a call); a list row's id is its own.
  if (tap && !tap.list && !message.replies?.includes(tap.buttonId))
    throw new TransportError('invalid', `message ${id} has no quick reply button ${tap.buttonId}`)
}

/** Whether `phone` received `message` (it was sent to it, or to a group it belongs to, by someone else). */
export function receivedBy(groups: GroupRegistry, message: LoggedMessage, phone: string): boolean {
  if (message.from === phone) return false
  if (!message.to.endsWith('@g.us')) return message.to === phone
  return groups.get(message.to)?.members.has(phone) === true
}
