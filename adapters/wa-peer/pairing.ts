import { randomBytes, timingSafeEqual } from 'node:crypto'
import type { BinaryNode, proto } from '@whiskeysockets/baileys'
import { bytes, child } from './baileys.ts'
import { announceDevice } from './messaging.ts'
import type { Account, Channel, LinkedDevice, PeerCore, Registration } from './model.ts'

/**
 * Pairing by QR, as the phone does it: the QR names a registering connection (its ref) and carries
 * the client's Noise key, identity key and ADV secret. The peer checks both keys against what the
 * connection registered with, sends `pair-success` with the account's signature over the device
 * identity and an HMAC keyed by the ADV secret, verifies the device signature in the client's reply,
 * then ends the stream with 515 so that the client logs in with its new credentials.
 */

/** What a QR carries (Baileys' `https://wa.me/settings/linked_devices#ref,noise,identity,adv,platform`, or the part after `#`). */
interface QrContent {
  ref: string
  noiseKey: Buffer
  identityKey: Buffer
  advSecret: Buffer
}

/** Read a QR string; undefined when it is not one. */
function parseQr(qr: string): QrContent | undefined {
  const parts = (qr.includes('#') ? qr.slice(qr.indexOf('#') + 1) : qr).split(',')
  if (parts.length < 4) return undefined
  const [ref, noise, identity, adv] = parts
  const noiseKey = Buffer.from(noise, 'base64')
  const identityKey = Buffer.from(identity, 'base64')
  const advSecret = Buffer.from(adv, 'base64')
  if (!ref || noiseKey.length !== 32 || identityKey.length !== 32 || advSecret.length !== 32) return undefined
  return { ref, noiseKey, identityKey, advSecret }
}

/** The signal keys and Noise key of a registration payload. */
export function registrationOf(payload: proto.IClientPayload, noiseKey: Buffer, refs: string[]): Registration | undefined {
  const data = payload.devicePairingData
  if (!data?.eIdent || !data.eRegid || !data.eSkeyId || !data.eSkeyVal || !data.eSkeySig) return undefined
  const regid = Buffer.from(data.eRegid)
  const skeyId = Buffer.from(data.eSkeyId)
  return {
    noiseKey,
    identityKey: Buffer.from(data.eIdent),
    registrationId: regid.readUIntBE(0, regid.length),
    signedPreKey: { keyId: skeyId.readUIntBE(0, skeyId.length), publicKey: Buffer.from(data.eSkeyVal), signature: Buffer.from(data.eSkeySig) },
    refs,
  }
}

/** The `pair-device` iq that makes a registering client show its QR codes (one per ref). */
export function pairDeviceIq(refs: string[]): BinaryNode {
  return {
    tag: 'iq',
    attrs: { id: `pair-${randomBytes(4).toString('hex')}`, type: 'set', xmlns: 'md', from: 's.whatsapp.net' },
    content: [{ tag: 'pair-device', attrs: {}, content: refs.map(ref => ({ tag: 'ref', attrs: {}, content: Buffer.from(ref) })) }],
  }
}

/**
 * The phone of `account` scans `qr`: pairs the registering connection it names as a new companion
 * device of the account. Rejects when no connection shows that QR, when its keys do not match, or
 * when the client's device signature does not verify.
 */
export async function pairByQr(core: PeerCore, account: Account, qr: string): Promise<LinkedDevice> {
  const content = parseQr(qr)
  if (!content) throw new Error('not a WhatsApp QR')
  const channel = core.qrRefs.get(content.ref)
  const registration = channel?.registration
  if (!channel || !registration || channel.closed) throw new Error(`no connection shows the QR ref ${content.ref}`)
  if (!sameBytes(registration.noiseKey, content.noiseKey)) throw problem(core, 'the QR noise key is not the key of the connection that shows it')
  if (!sameBytes(registration.identityKey, content.identityKey)) throw problem(core, 'the QR identity key is not the registered one')
  return pairWithSecret(core, account, channel, registration, content.advSecret)
}

/** Pair the registering `channel` as a new device of `account`, the pair-success HMAC keyed by `advSecret` (from the QR, or derived in a code pairing). */
export async function pairWithSecret(core: PeerCore, account: Account, channel: Channel, registration: Registration, advSecret: Buffer): Promise<LinkedDevice> {
  const { lib } = core
  const { proto, Curve } = lib
  for (const ref of registration.refs) core.qrRefs.delete(ref)
  const deviceNumber = account.nextDevice++
  const keyIndex = deviceNumber
  const accountKey = account.signal.creds.signedIdentityKey
  const details = Buffer.from(
    proto.ADVDeviceIdentity.encode({ rawId: Number(account.pn.slice(-6)), timestamp: Math.floor(Date.now() / 1000), keyIndex }).finish(),
  )
  const accountSignature = Curve.sign(accountKey.private, Buffer.concat([lib.WA_ADV_ACCOUNT_SIG_PREFIX, details, registration.identityKey]))
  const signed = Buffer.from(proto.ADVSignedDeviceIdentity.encode({ details, accountSignatureKey: accountKey.public, accountSignature }).finish())
  const hmac = lib.hmacSign(signed, advSecret)
  const identity = proto.ADVSignedDeviceIdentityHMAC.encode({ details: signed, hmac }).finish()
  const jid = `${account.pn}:${deviceNumber}@s.whatsapp.net`
  const lid = `${account.lidUser}:${deviceNumber}@lid`
  // 60 s, as Baileys waits for its own iqs: a busy device (many links at once) may take longer than the default 10 s.
  const reply = await channel.query(
    {
      tag: 'iq',
      attrs: { id: `pair-success-${randomBytes(4).toString('hex')}`, type: 'set', xmlns: 'md', from: 's.whatsapp.net', t: core.now() },
      content: [
        {
          tag: 'pair-success',
          attrs: {},
          content: [
            { tag: 'device-identity', attrs: { 'key-index': String(keyIndex) }, content: identity },
            { tag: 'platform', attrs: { name: 'android' } },
            { tag: 'device', attrs: { jid, lid } },
          ],
        },
      ],
    },
    60_000,
  )
  const signedReply = bytes(child(child(reply, 'pair-device-sign'), 'device-identity'))
  if (reply.attrs.type !== 'result' || !signedReply) throw problem(core, `the client answered pair-success with ${reply.attrs.type}`)
  const answered = proto.ADVSignedDeviceIdentity.decode(signedReply)
  const deviceMessage = Buffer.concat([lib.WA_ADV_DEVICE_SIG_PREFIX, Buffer.from(answered.details ?? []), registration.identityKey, accountKey.public])
  if (!answered.deviceSignature || !Curve.verify(registration.identityKey, deviceMessage, Buffer.from(answered.deviceSignature)))
    throw problem(core, 'the device signature in the pair-success answer does not verify')
  const device: LinkedDevice = {
    account,
    device: deviceNumber,
    jid,
    lid,
    noiseKey: registration.noiseKey,
    identityKey: registration.identityKey,
    registrationId: registration.registrationId,
    signedPreKey: registration.signedPreKey,
    preKeys: new Map(),
    keyIndex,
    waiting: [],
    logins: 0,
    online: false,
  }
  account.devices.set(deviceNumber, device)
  core.stats.pairings++
  announceDevice(core, device, 'add')
  channel.streamError({ code: '515' })
  return device
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}

function problem(core: PeerCore, text: string): Error {
  core.records.problems.push(text)
  return new Error(text)
}
