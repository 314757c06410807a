import type { BinaryNode } from '@whiskeysockets/baileys'
import { bytes, child, children, iqResult as result } from './baileys.ts'
import { splitJid } from './messaging.ts'
import type { LinkedDevice, PeerCore } from './model.ts'
import { bundleNodes, readKeyNode } from './phone.ts'

/**
 * The `encrypt` iqs of a logged-in device: how many one-time pre-keys the server holds for it, their
 * upload (the identity key must be the one it registered with), the key-bundle digest, key bundles of
 * other devices (a phone's fresh one, or a companion's from its uploaded pre-keys, each handed out
 * once), and the rotation of its signed pre-key.
 */
export async function encryptIq(core: PeerCore, device: LinkedDevice, iq: BinaryNode, first: BinaryNode | undefined): Promise<BinaryNode | undefined> {
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
