import type { BinaryNode } from '@whiskeysockets/baileys'
import { children, iqResult } from './baileys.ts'
import { groupIq } from './groups.ts'
import { encryptIq } from './keys.ts'
import { announceDevice } from './messaging.ts'
import type { Channel, PeerCore } from './model.ts'
import { codeFinish, codeHello } from './pairing-code.ts'
import { usyncAnswer } from './usync.ts'

/** What an iq handler gets: the iq, its first child, the connection it came on. */
interface IqRequest {
  core: PeerCore
  channel: Channel
  iq: BinaryNode
  first: BinaryNode | undefined
}

/** Answers one namespace's iqs; undefined for an iq of that namespace it does not know. */
type IqHandler = (request: IqRequest) => BinaryNode | undefined | Promise<BinaryNode | undefined>

/**
 * The answers to a device's iqs, one handler per namespace (`xmlns`): pings (`w:p`), `passive`,
 * stats, AB props, blocklist, privacy settings, the `encrypt` family (keys.ts), `usync` (usync.ts),
 * groups (`w:g2`, groups.ts), `media_conn` (`w:m`, media.ts, when the media host runs) and `md` (pairing by code, a device that unlinks itself). A new namespace is one entry here. An iq
 * no handler knows is recorded in `records.unknownIqs` and answered with error 501, so a test sees it
 * instead of a client waiting 60 s for an answer.
 */
const HANDLERS: Record<string, IqHandler> = {
  'w:p': ({ iq }) => iqResult(iq),
  passive: ({ iq }) => iqResult(iq),
  'w:stats': ({ iq }) => iqResult(iq),
  abt: ({ iq }) => iqResult(iq, [{ tag: 'props', attrs: { protocol: '1', hash: 'wa-peer' }, content: [] }]),
  blocklist: ({ iq }) => (iq.attrs.type === 'get' ? iqResult(iq, [{ tag: 'list', attrs: {}, content: [] }]) : iqResult(iq)),
  privacy: ({ iq, first }) => {
    if (iq.attrs.type === 'get' && first?.tag === 'privacy')
      return iqResult(iq, [{ tag: 'privacy', attrs: {}, content: PRIVACY.map(([name, value]) => ({ tag: 'category', attrs: { name, value } })) }])
    return iq.attrs.type === 'set' ? iqResult(iq) : undefined
  },
  usync: ({ core, iq, first }) => iqResult(iq, [usyncAnswer(core, first)]),
  'w:m': ({ core, iq, first }) => (first?.tag === 'media_conn' && core.media ? core.media.mediaConn(iq) : undefined),
  'w:g2': ({ core, channel, iq }) => (channel.device ? groupIq(core, channel.device, iq) : undefined),
  encrypt: ({ core, channel, iq, first }) => (channel.device ? encryptIq(core, channel.device, iq, first) : undefined),
  md: ({ core, channel, iq, first }) => {
    if (iq.attrs.type !== 'set') return undefined
    if (first?.tag === 'link_code_companion_reg' && first.attrs.stage === 'companion_hello') return codeHello(core, channel, iq, first)
    if (first?.tag === 'link_code_companion_reg' && first.attrs.stage === 'companion_finish') return codeFinish(core, iq, first)
    if (first?.tag === 'remove-companion-device' && channel.device) {
      channel.device.account.devices.delete(channel.device.device)
      announceDevice(core, channel.device, 'remove')
      return iqResult(iq)
    }
    return undefined
  },
}

/** The answer to an iq a device sent (a result, or error 501 for an iq the peer does not know). */
export async function answerIq(core: PeerCore, channel: Channel, iq: BinaryNode): Promise<BinaryNode> {
  const handler = HANDLERS[iq.attrs.xmlns ?? '']
  const answer = handler ? await handler({ core, channel, iq, first: children(iq)[0] }) : undefined
  if (answer) return answer
  core.records.unknownIqs.push(iq)
  return {
    tag: 'iq',
    attrs: { from: 's.whatsapp.net', type: 'error', id: iq.attrs.id },
    content: [{ tag: 'error', attrs: { code: '501', text: 'feature-not-implemented' } }],
  }
}

// --- Internal helpers ---

const PRIVACY: [string, string][] = [
  ['last', 'all'],
  ['online', 'all'],
  ['profile', 'all'],
  ['status', 'all'],
  ['groupadd', 'all'],
  ['readreceipts', 'all'],
  ['calladd', 'all'],
]
