import type { BinaryNode } from '@whiskeysockets/baileys'
import { bytes, child, children } from './baileys.ts'
import { splitJid } from './messaging.ts'
import type { Channel, LinkedDevice, PeerCore } from './model.ts'
import { codeFinish, codeHello } from './pairing-code.ts'
import { bundleNodes, readKeyNode } from './phone.ts'
import { usyncAnswer } from './usync.ts'

/**
 * The answers to a device's iqs, by namespace: pings (`w:p`), `passive`, stats, AB props, blocklist,
 * privacy settings, the `encrypt` family (pre-key count, upload, digest, key bundles, signed pre-key
 * rotation), `usync`, and `md` (a device that unlinks itself). An iq the peer does not know is
 * recorded in `records.unknownIqs` and answered with error 501, so a test sees it instead of a client
 * waiting 60 s for an answer.
 */
export async function answerIq(core: PeerCore, channel: Channel, iq: BinaryNode): Promise<BinaryNode> {
  const { xmlns, type } = iq.attrs
  const first = children(iq)[0]
  const device = channel.device
  switch (xmlns) {
    case 'w:p':
    case 'passive':
    case 'w:stats':
      return result(iq)
    case 'abt':
      return result(iq, [{ tag: 'props', attrs: { protocol: '1', hash: 'wa-peer' }, content: [] }])
    case 'blocklist':
      return type === 'get' ? result(iq, [{ tag: 'list', attrs: {}, content: [] }]) : result(iq)
    case 'privacy':
      if (type === 'get' && first?.tag === 'privacy') return result(iq, [{ tag: 'privacy', attrs: {}, content: PRIVACY.map(([name, value]) => ({ tag: 'category', attrs: { name, value } })) }])
      if (type === 'set') return result(iq)
      break
    case 'usync':
      return result(iq, [usyncAnswer(core, first)])
    case 'encrypt':
      if (device) {
        const answer = await encryptIq(core, device, iq, first)
        if (answer) return answer
      }
      break
    case 'md':
      if (type === 'set' && first?.tag === 'link_code_companion_reg') {
        const answer = first.attrs.stage === 'companion_hello' ? codeHello(core, channel, iq, first) : first.attrs.stage === 'companion_finish' ? codeFinish(core, iq, first) : undefined
        if (answer) return answer
      }
      if (type === 'set' && first?.tag === 'remove-companion-device' && device) {
        device.account.devices.delete(device.device)
        return result(iq)
      }
      break
  }
  core.records.unknownIqs.push(iq)
  return { tag: 'iq', attrs: { from: 's.whatsapp.net', type: 'error', id: iq.attrs.id }, content: [{ tag: 'error', attrs: { code: '501', text: 'feature-not-implemented' } }] }
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

function result(iq: BinaryNode, content?: BinaryNode[]): BinaryNode {
  return { tag: 'iq', attrs: { from: 's.whatsapp.net', type: 'result', id: iq.attrs.id }, ...(content ? { content } : {}) }
}

async function encryptIq(core: PeerCore, device: LinkedDevice, iq: BinaryNode, first: BinaryNode | undefined): Promise<BinaryNode | undefined> {
  const { type } = iq.attrs
  if (type === 'get' && first?.tag === 'count') return result(iq, [{ tag: 'count', attrs: { value: String(device.preKeys.size) } }])
  if (type === 'get' && first?.tag === 'digest') return result(iq, [{ tag: 'digest', attrs: {} }])
  if (type === 'get' && first?.tag === 'key') return result(iq, [{ tag: 'list', attrs: {}, content: await keyBundles(core, first) }])
  if (type === 'set' && child(iq, 'list')) {
    const identity = bytes(child(iq, 'identity'))
    if (!identity?.equals(device.identityKey)) core.records.problems.push(`${device.jid} uploaded pre-keys under another identity key`)
    for (const key of children(child(iq, 'list'))) {
      const read = readKeyNode(key)
      if (read) device.preKeys.set(read.keyId, read.publicKey)
    }
    const signed = readKeyNode(child(iq, 'skey'))
    if (signed?.signature) device.signedPreKey = { keyId: signed.keyId, publicKey: signed.publicKey, signature: signed.signature }
    return result(iq)
  }
  if (type === 'set' && first?.tag === 'rotate') {
    const signed = readKeyNode(child(first, 'skey'))
    if (signed?.signature) device.signedPreKey = { keyId: signed.keyId, publicKey: signed.publicKey, signature: signed.signature }
    return result(iq)
  }
  return undefined
}

async function keyBundles(core: PeerCore, key: BinaryNode): Promise<BinaryNode[]> {
  const users: BinaryNode[] = []
  for (const user of children(key).filter(u => u.tag === 'user' && u.attrs.jid)) {
    const { jid } = user.attrs
    const { user: id, device } = splitJid(jid)
    const account = core.accountByUser(id)
    const companion = device === 0 ? undefined : account?.devices.get(device)
    const bundle = device === 0 && account ? await account.signal.bundle() : companion ? core.deviceBundle(companion) : undefined
    if (bundle) users.push({ tag: 'user', attrs: { jid }, content: bundleNodes(bundle) })
    else core.records.problems.push(`a key bundle was asked for ${jid}, which is no device of this peer`)
  }
  return users
}
