import type { BinaryNode } from '@whiskeysockets/baileys'
import { bytes, child, children } from './baileys.ts'
import { splitJid } from './messaging.ts'
import type { Account, PeerCore } from './model.ts'

/**
 * USync answers: for each user of the query, the protocols asked for. `devices` lists the phone
 * (device 0) and the account's linked companions (with their key index); `lid` gives the account's LID
 * for a phone-number JID (rc14 drops a recipient without a LID mapping: "All encryptions failed");
 * `contact` says whether a number is on WhatsApp (an account of this peer). Other protocols are
 * answered with nothing for that user.
 */
export function usyncAnswer(core: PeerCore, usync: BinaryNode | undefined): BinaryNode {
  const protocols = children(child(usync, 'query')).map(p => p.tag)
  const users = children(child(usync, 'list')).filter(u => u.tag === 'user')
  const list = users.map(user => answerUser(core, user, protocols))
  return { tag: 'usync', attrs: { ...(usync?.attrs ?? {}) }, content: [{ tag: 'list', attrs: {}, content: list }] }
}

// --- Internal helpers ---

function answerUser(core: PeerCore, user: BinaryNode, protocols: string[]): BinaryNode {
  const phone = bytes(child(user, 'contact'))?.toString('utf8').replace(/\D/g, '')
  const jid = user.attrs.jid ?? `${phone}@s.whatsapp.net`
  const { user: id, server } = splitJid(jid)
  const account = core.accountByUser(id)
  const content: BinaryNode[] = []
  for (const protocol of protocols) {
    if (protocol === 'devices')
      content.push({ tag: 'devices', attrs: {}, content: [{ tag: 'device-list', attrs: {}, content: account ? deviceList(account) : [] }] })
    else if (protocol === 'lid' && account && server === 's.whatsapp.net') content.push({ tag: 'lid', attrs: { val: account.lidJid } })
    else if (protocol === 'contact') content.push({ tag: 'contact', attrs: { type: account && account.pn === id ? 'in' : 'out' } })
  }
  return { tag: 'user', attrs: { jid: account && server === 's.whatsapp.net' ? account.jid : jid }, content }
}

function deviceList(account: Account): BinaryNode[] {
  const companions = [...account.devices.values()].map(d => ({ tag: 'device', attrs: { id: String(d.device), 'key-index': String(d.keyIndex) } }))
  return [{ tag: 'device', attrs: { id: '0' } }, ...companions]
}
