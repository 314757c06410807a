import { timingSafeEqual } from 'node:crypto'
import type { proto } from '@whiskeysockets/baileys'
import { deliver, deliverWaiting, phoneMessage } from './messaging.ts'
import type { Channel, LinkedDevice, PeerCore } from './model.ts'

/**
 * Login with stored credentials. The payload names the device (`username`, `device`); the peer
 * accepts it only when that device is linked and the connection's Noise static key is the key the
 * device registered with (else `<failure reason="401">`). A second login of a device closes its
 * first connection with `conflict`/`replaced` (counted in `stats.replaced`). The peer then answers
 * `<success>` with the device's LID; once the client says it is active (the `passive` iq after its
 * pre-key upload), the peer delivers what waited (offline messages), sends the offline marker
 * (`<ib><offline count=N/></ib>`, which ends Baileys' offline wait) and, when `endHistoryWait` is on,
 * a history-sync notification of a type Baileys' default filter drops (FULL), from the account's own
 * phone, which ends its 20 s wait for a history sync.
 */
export function login(core: PeerCore, channel: Channel, payload: proto.ClientPayload, clientStatic: Buffer): LinkedDevice | undefined {
  const jid = `${String(payload.username)}:${payload.device ?? 0}@s.whatsapp.net`
  const device = core.deviceByJid(jid)
  const reason = !device
    ? `login of ${jid}, which is not linked`
    : !sameBytes(device.noiseKey, clientStatic)
      ? `login of ${jid} with another Noise key`
      : undefined
  if (!device || reason) {
    core.stats.refusedLogins++
    core.records.problems.push(reason ?? jid)
    channel.send({ tag: 'failure', attrs: { reason: '401', location: 'wa-peer' } })
    channel.close()
    return undefined
  }
  const previous = device.channel
  if (previous && previous !== channel && !previous.closed) {
    core.stats.replaced++
    previous.streamError({ child: { tag: 'conflict', attrs: { type: 'replaced' } } })
  }
  device.channel = channel
  device.online = false
  device.logins++
  core.stats.logins++
  channel.device = device
  channel.send({ tag: 'success', attrs: { t: core.now(), lid: device.lid, props: '1', abprops: '1', location: 'wa-peer', creation: core.now() } })
  return device
}

/** After the client's `passive active`: offline messages, the offline marker (unless turned off), the history-sync notification; then the device is online. */
export async function goOnline(
  core: PeerCore,
  device: LinkedDevice,
  channel: Channel,
  options: { endHistoryWait: boolean; offlineMarker: boolean },
): Promise<void> {
  if (device.channel !== channel || device.online) return
  const count = await deliverWaiting(core, device, channel)
  if (options.offlineMarker) channel.send({ tag: 'ib', attrs: { from: 's.whatsapp.net' }, content: [{ tag: 'offline', attrs: { count: String(count) } }] })
  device.online = true
  if (!options.endHistoryWait) return
  const { proto } = core.lib
  const notification: proto.IMessage = {
    protocolMessage: {
      type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
      historySyncNotification: { syncType: proto.HistorySync.HistorySyncType.FULL, chunkOrder: 1, progress: 100 },
    },
  }
  deliver(core, device, phoneMessage(core, device.account, notification))
}

// --- Internal helpers ---

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}
