import { randomBytes } from 'node:crypto'
import type { BinaryNode } from '@whiskeysockets/baileys'
import { bytes, child } from './baileys.ts'
import type { Account, Channel, CodeRequest, LinkedDevice, PeerCore } from './model.ts'
import { pairWithSecret } from './pairing.ts'

/**
 * Pairing by code (`link_code_companion_reg`). The client's `companion_hello` names the phone number
 * and carries its ephemeral key wrapped under a key derived from the code (PBKDF2), which the peer
 * cannot read until a phone enters the code. The phone then unwraps it, wraps an ephemeral key of its
 * own with the same code and sends it with its identity key (`primary_hello` notification); the
 * client answers `companion_finish` with its key bundle encrypted under the shared secret. The phone
 * decrypts it (a wrong code fails here), derives the ADV secret as the client does and pairs the
 * device as a QR scan does (pair-success, device signature, 515).
 */

/** The client asked for a pairing code (`companion_hello`); answers the iq with the pairing ref. */
export function codeHello(core: PeerCore, channel: Channel, iq: BinaryNode, reg: BinaryNode): BinaryNode | undefined {
  const pn = (reg.attrs.jid ?? '').split('@')[0].split(':')[0]
  const wrappedEphemeral = bytes(child(reg, 'link_code_pairing_wrapped_companion_ephemeral_pub'))
  if (!channel.registration || !pn || !wrappedEphemeral || wrappedEphemeral.length !== 80) return undefined
  const ref = `code-${randomBytes(8).toString('hex')}`
  core.codeRequests.set(pn, { channel, pn, ref, wrappedEphemeral })
  return {
    tag: 'iq',
    attrs: { from: 's.whatsapp.net', type: 'result', id: iq.attrs.id },
    content: [{ tag: 'link_code_companion_reg', attrs: {}, content: [{ tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from(ref) }] }],
  }
}

/** The client's `companion_finish`: handled by the phone that entered the code; answered with a result, or an error for a wrong code. */
export function codeFinish(core: PeerCore, iq: BinaryNode, reg: BinaryNode): BinaryNode | undefined {
  const ref = bytes(child(reg, 'link_code_pairing_ref'))?.toString()
  const request = [...core.codeRequests.values()].find(r => r.ref === ref)
  if (!request?.finish) return undefined
  const ok = request.finish(reg)
  return ok
    ? { tag: 'iq', attrs: { from: 's.whatsapp.net', type: 'result', id: iq.attrs.id } }
    : { tag: 'iq', attrs: { from: 's.whatsapp.net', type: 'error', id: iq.attrs.id }, content: [{ tag: 'error', attrs: { code: '400', text: 'bad-request' } }] }
}

/** The phone of `account` enters `code`: resolves with the linked device, rejects for a wrong code or when no client asked for a code for this number (within 5 s). */
export async function enterCode(core: PeerCore, account: Account, code: string): Promise<LinkedDevice> {
  const request = await requestFor(core, account.pn)
  const registration = request?.channel.registration
  if (!request || !registration || request.channel.closed) throw new Error(`no client asked for a pairing code for ${account.pn}`)
  const { lib } = core
  const companionEphemeral = await unwrap(core, code, request.wrappedEphemeral)
  const primaryEphemeral = lib.Curve.generateKeyPair()
  const finished = new Promise<Buffer>((resolve, reject) => {
    request.finish = reg => {
      try {
        resolve(advSecret(core, account, request, companionEphemeral, primaryEphemeral.private, reg))
        return true
      } catch (err) {
        reject(err)
        return false
      }
    }
  })
  request.channel.send({
    tag: 'notification',
    attrs: { from: 's.whatsapp.net', type: 'link_code_companion_reg', id: `notify-${randomBytes(4).toString('hex')}`, t: core.now() },
    content: [
      {
        tag: 'link_code_companion_reg',
        attrs: { stage: 'primary_hello' },
        content: [
          { tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from(request.ref) },
          { tag: 'primary_identity_pub', attrs: {}, content: Buffer.from(account.signal.creds.signedIdentityKey.public) },
          { tag: 'link_code_pairing_wrapped_primary_ephemeral_pub', attrs: {}, content: await wrap(core, code, primaryEphemeral.public) },
        ],
      },
    ],
  })
  const secret = await withTimeout(finished, 10_000, 'the client did not finish the code pairing')
  core.codeRequests.delete(account.pn)
  return pairWithSecret(core, account, request.channel, registration, secret)
}

// --- Internal helpers ---

/** The request for `pn`, waiting up to 5 s for it (the client's `companion_hello` is not awaited by the client, so it may still be on its way). */
async function requestFor(core: PeerCore, pn: string): Promise<CodeRequest | undefined> {
  const deadline = Date.now() + 5_000
  while (!core.codeRequests.has(pn) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
  return core.codeRequests.get(pn)
}

async function unwrap(core: PeerCore, code: string, wrapped: Buffer): Promise<Uint8Array> {
  const key = await core.lib.derivePairingCodeKey(code, wrapped.subarray(0, 32))
  return core.lib.aesDecryptCTR(wrapped.subarray(48, 80), key, wrapped.subarray(32, 48))
}

async function wrap(core: PeerCore, code: string, publicKey: Uint8Array): Promise<Buffer> {
  const salt = randomBytes(32)
  const iv = randomBytes(16)
  const key = await core.lib.derivePairingCodeKey(code, salt)
  return Buffer.concat([salt, iv, core.lib.aesEncryptCTR(Buffer.from(publicKey), key, iv)])
}

/** Decrypt the client's key bundle and derive the ADV secret the client derived; throws for a wrong code or a foreign identity. */
function advSecret(
  core: PeerCore,
  account: Account,
  request: CodeRequest,
  companionEphemeral: Uint8Array,
  primaryPrivate: Uint8Array,
  reg: BinaryNode,
): Buffer {
  const { lib } = core
  const bundle = bytes(child(reg, 'link_code_pairing_wrapped_key_bundle'))
  const companionIdentity = bytes(child(reg, 'companion_identity_public'))
  if (!bundle || !companionIdentity) throw problem(core, 'companion_finish without its key bundle')
  const shared = lib.Curve.sharedKey(primaryPrivate, companionEphemeral)
  const key = Buffer.from(lib.hkdf(shared, 32, { salt: bundle.subarray(0, 32), info: 'link_code_pairing_key_bundle_encryption_key' }))
  let plain: Buffer
  try {
    plain = lib.aesDecryptGCM(bundle.subarray(44), key, bundle.subarray(32, 44), Buffer.alloc(0))
  } catch {
    throw problem(core, `the key bundle of ${request.pn} does not decrypt: wrong pairing code`)
  }
  const identity = plain.subarray(0, 32)
  const primaryIdentity = Buffer.from(account.signal.creds.signedIdentityKey.public)
  if (!identity.equals(companionIdentity) || !identity.equals(request.channel.registration!.identityKey) || !plain.subarray(32, 64).equals(primaryIdentity))
    throw problem(core, 'the code pairing key bundle names other identity keys')
  const identityShared = lib.Curve.sharedKey(account.signal.creds.signedIdentityKey.private, identity)
  return Buffer.from(lib.hkdf(Buffer.concat([shared, identityShared, plain.subarray(64, 96)]), 32, { info: 'adv_secret' }))
}

function problem(core: PeerCore, text: string): Error {
  core.records.problems.push(text)
  return new Error(text)
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]).finally(() =>
    clearTimeout(timer),
  )
}
