import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { compiledExports, entryPoints, surfaceOf, type Surface } from './entry-points.ts'

/**
 * The public surface of the package: every entry point package.json exports, with the names it has
 * at run time (Object.keys of the imported module) and the names only the type checker sees (read
 * with the TypeScript compiler API). Every name is a promise to the hosts and adapter authors who
 * import it, so adding, renaming or removing one shows up as a diff of this table.
 */
const SURFACE: Record<string, Surface> = {
  zapgate: {
    runtime: ['GatewayError', 'MediaFetchError', 'MissingPackageError', 'TransportError', 'accountAdmin', 'createGateway', 'verifyWebhook'],
    types: [
      'AccountAdmin',
      'AccountSummary',
      'AgentContact',
      'AgentOptions',
      'AgentReply',
      'AgentRequest',
      'AgentResponder',
      'AgentTurn',
      'AtomicStorage',
      'Button',
      'Card',
      'DeadLetter',
      'DeadLetterReason',
      'DeviceSummary',
      'ErrorCode',
      'FetchedMedia',
      'Gateway',
      'GatewayEventMap',
      'GatewayEvents',
      'GatewayOptions',
      'GroupInfo',
      'GroupJoinRequest',
      'GroupRef',
      'IncomingContent',
      'IncomingMessage',
      'LinkChallenge',
      'LinkRequest',
      'Logger',
      'MediaFetcher',
      'MediaKind',
      'MediaPayload',
      'MediaRef',
      'MessageRef',
      'MessagingOptions',
      'OutgoingMessage',
      'Plan',
      'RateLimitOptions',
      'RateLimitRules',
      'RateRule',
      'ReceivedMedia',
      'SendKind',
      'SentMessage',
      'ServiceOptions',
      'SessionState',
      'SessionStatus',
      'SharedContact',
      'Storage',
      'Transport',
      'TransportContext',
      'TransportEvent',
      'WebhookAdmin',
      'WebhookDelivery',
      'WebhookEventName',
      'WebhookOptions',
      'WebhookPayload',
      'WebhookResponse',
      'WebhookSender',
    ],
  },
  'zapgate/adapter-kit': {
    runtime: [
      'AddressRefusedError',
      'BoundedMap',
      'KeyedLock',
      'MissingPackageError',
      'atomicSteps',
      'checkUrl',
      'childLogger',
      'coerceWhen',
      'guardedAgents',
      'importOptional',
      'isAnything',
      'isBoolean',
      'isInstalled',
      'isNumber',
      'isPrivateAddress',
      'isScalar',
      'isString',
      'isStringOrNumber',
      'jsonEqual',
      'publicAddressesOnly',
      'putBounded',
      'requireAtomic',
      'requireInstalled',
      'silentLogger',
      'supportsAtomic',
    ],
    types: ['AddressPolicy', 'GuardedAgentOptions', 'LookupFunction', 'PackageLookup', 'UrlRefusal'],
  },
  'zapgate/testing': {
    runtime: ['storageContract', 'transportContract'],
    types: ['ContractOptions', 'IncomingSpec', 'ReceiptRecord', 'SentRecord', 'StorageContractOptions', 'TransportHarness'],
  },
  'zapgate/client': {
    runtime: ['HOLDER_HEADER', 'OPERATION_ROUTES', 'createClient'],
    types: [
      'AddDeviceAnswer',
      'AddDeviceRequest',
      'ClientAnswer',
      'ClientOptions',
      'ClientRequest',
      'CreateAgentAnswer',
      'CreateAgentRequest',
      'CreateGroupAnswer',
      'CreateGroupRequest',
      'DeleteDeviceAnswer',
      'DeleteDeviceRequest',
      'DeleteFlowConversationsAnswer',
      'DeleteFlowConversationsRequest',
      'DeleteMessageAnswer',
      'DeleteMessageRequest',
      'DeleteShareLinkAnswer',
      'DeleteShareLinkRequest',
      'DeviceStatusAnswer',
      'DeviceStatusRequest',
      'ErrorAnswerBody',
      'GatewayClient',
      'GenerateQrCodeAnswer',
      'GenerateQrCodeRequest',
      'GroupInfoAnswer',
      'GroupInfoRequest',
      'JoinGroupAnswer',
      'JoinGroupRequest',
      'ListSchedulesAnswer',
      'ListSchedulesRequest',
      'MarkMessageReadAnswer',
      'MarkMessageReadRequest',
      'OperationAnswer',
      'OperationName',
      'OperationRequest',
      'ReactToMessageAnswer',
      'ReactToMessageRequest',
      'RegisterUserAnswer',
      'RegisterUserRequest',
      'SendButtonsAnswer',
      'SendButtonsRequest',
      'SendCarouselAnswer',
      'SendCarouselRequest',
      'SendContactAnswer',
      'SendContactRequest',
      'SendLocationAnswer',
      'SendLocationRequest',
      'SendMediaAnswer',
      'SendMediaRequest',
      'SendOtpAnswer',
      'SendOtpRequest',
      'SendTextAnswer',
      'SendTextRequest',
      'SwitchWebhookAnswer',
      'SwitchWebhookRequest',
      'VerifyOtpAnswer',
      'VerifyOtpRequest',
      'Wire',
      'WireFlag',
    ],
  },
  'zapgate/adapters/agent-http': {
    runtime: ['httpAgentResponder'],
    types: ['HttpAgentOptions', 'HttpAgentResponder'],
  },
  'zapgate/adapters/media-http': {
    runtime: ['httpMediaFetcher'],
    types: ['HttpMediaOptions'],
  },
  'zapgate/adapters/storage-keyv': {
    runtime: ['keyvStorage', 'missingPackageError', 'storageFromUrl'],
    types: ['KeyvStorageOptions', 'StoreUrlOptions'],
  },
  'zapgate/adapters/transport-baileys': {
    runtime: ['BaileysTransport', 'CloseCode', 'ConnectionProblem', 'baileysTransport', 'brazilianAlternative', 'closeAction', 'closeCause', 'parseInviteCode'],
    types: [
      'BaileysLogLevel',
      'BaileysModule',
      'BaileysTransportOptions',
      'CloseAction',
      'CloseCause',
      'MediaDownloader',
      'ProxyOption',
      'ReconnectOptions',
      'SocketEvents',
      'SocketFactory',
      'SocketInfo',
      'SocketLike',
      'SocketWire',
    ],
  },
  'zapgate/adapters/transport-memory': {
    runtime: ['MemoryNetwork', 'MemoryTransport', 'memoryTransport', 'simulatorRoutes', 'simulatorServer'],
    types: [
      'DeviceCredentials',
      'Fault',
      'InboxCard',
      'InboxContent',
      'InboxEntry',
      'LinkTarget',
      'MemoryNetworkOptions',
      'MemoryTransportOptions',
      'NetworkStats',
      'PhoneMessage',
      'PhoneNetwork',
      'PhoneProfile',
      'SimulatorRoutesOptions',
      'SimulatorServer',
      'SimulatorServerOptions',
      'StoredSession',
      'Traffic',
    ],
  },
  'zapgate/adapters/wa-peer': {
    runtime: ['PeerPhoneNetwork', 'WaPeer', 'WaPhone', 'joinWaPeer', 'startWaPeer', 'waPeerServer', 'waPeerWebSocketUrl', 'watchLinkChallenges'],
    types: [
      'DeviceReceipt',
      'JoinedWaPeer',
      'MediaHost',
      'PeerPhoneNetworkOptions',
      'PeerRecords',
      'PeerStats',
      'PhoneMediaKind',
      'PhoneMediaOptions',
      'PhoneMessage',
      'PhoneSent',
      'WaDeviceInfo',
      'WaFault',
      'WaGroupInfo',
      'WaPeerOptions',
      'WaPeerServer',
      'WaPeerServerOptions',
      'WatchedTransport',
    ],
  },
  'zapgate/adapters/webhook-http': {
    runtime: ['httpWebhookSender'],
    types: ['HttpWebhookOptions'],
  },
}

const root = new URL('../..', import.meta.url).pathname
const entries = entryPoints(root)
const surface = suite<{ compiled: Map<string, string[]> }>('the public surface of the package')

surface.before(context => {
  context.compiled = compiledExports(root, entries)
})

surface('package.json exports these entry points (each adapter folder with an index.ts is one)', () => {
  assert.equal(
    entries.map(entry => entry.specifier),
    Object.keys(SURFACE),
  )
})

for (const entry of entries) {
  surface(`${entry.specifier} exports these names at run time, each declared in ${entry.file}`, async ({ compiled }) => {
    const { runtime } = await surfaceOf(entry, compiled.get(entry.specifier)!)
    assert.equal(runtime, SURFACE[entry.specifier]?.runtime)
    assert.equal(
      runtime.filter(name => !compiled.get(entry.specifier)!.includes(name)),
      [],
      'names the compiler does not see exported',
    )
  })

  surface(`${entry.specifier} exports these types (names only the type checker sees)`, async ({ compiled }) => {
    const { types } = await surfaceOf(entry, compiled.get(entry.specifier)!)
    assert.equal(types, SURFACE[entry.specifier]?.types)
  })
}

surface.run()
