/** The contract between a fake socket and the fake network that built it. */
import type { AnyMessageContent, Contact, GroupMetadata, MessageRelayOptions, MiscMessageGenerationOptions, proto } from '@whiskeysockets/baileys'

/** One outgoing call: sendMessage (content) or relayMessage (message and relay options). */
export type SentRecord =
  | { via: 'sendMessage'; jid: string; content: AnyMessageContent; options?: MiscMessageGenerationOptions; id: string }
  | { via: 'relayMessage'; jid: string; message: proto.IMessage; options: MessageRelayOptions; id: string }

/**
 * What a fake socket reads and changes of its simulated network: the world's state and the test's
 * switches. FakeBaileys (index.ts, the helper tests import) implements it and builds the sockets (socket.ts).
 */
export interface FakeNetwork {
  readonly behaviour: { autoQr?: boolean; autoOpen?: boolean; failToConnect?: string }
  readonly groups: Map<string, GroupMetadata>
  readonly invites: Map<string, string>
  readonly notOnWhatsApp: Set<string>
  readonly canonical: Map<string, string>
  readonly lidMappings: Map<string, string>
  readonly failures: Map<string, Error>
  readonly hanging: Set<string>
  onWhatsAppSilent: number
  isMe(participant: { id: string; phoneNumber?: string }, me: Contact | undefined): boolean
  isMember(group: GroupMetadata, me: Contact | undefined): boolean
  groupOfInvite(code: string): GroupMetadata
  nextGroupId(): string
}
