import { TransportError } from 'zapgate'
import type { GroupInfo, GroupRef, Logger, MessageRef, OutgoingMessage, SentMessage } from 'zapgate'
import { SimClient, StreamRefused } from './sim-client.ts'
import type { FrameStream } from './sim-client.ts'
import type { ConnectResult, DeviceCredentials, DeviceEndpoint, DeviceNetwork, LinkChallengeSpec } from './types.ts'
import { encodeOutgoing, errorOfAnswer } from './wire.ts'
import type { Ack, Frame } from './wire.ts'

/** One device connection to the simulator server: its stream while open, its retry timer while lost. */
interface Connection {
  deviceId: string
  endpoint: DeviceEndpoint
  credentials: DeviceCredentials
  /** The server's id of the open stream (commands and acks name it). */
  id?: string
  stream?: FrameStream
  /** The `open` frame, acked once the transport announced the session (the server then flushes). */
  openSeq?: number
  /** Set by disconnect: nothing reopens it. */
  closing?: boolean
  /** Set while this transport logs the device out: the server closing it as `logged-out` is that logout's doing. */
  loggingOut?: boolean
  /** The server closed it as `logged-out` during this transport's logout: the server heard of it. */
  unlinked?: boolean
  failures: number
  timer?: NodeJS.Timeout
}

/** A pending link: the stream that hears of the scan. */
interface PendingLink {
  endpoint: DeviceEndpoint
  stream: FrameStream
  id: string
}

/**
 * The device side of a simulator server (`npm run sim`), reached over HTTP (docs/simulator.md): a
 * stream per pending link and per open device connection carries what the network tells the device
 * (linked, messages, closed as replaced or logged out); sends, receipts and group calls are plain
 * requests naming the connection. A stream that is lost is reopened with backoff (the session shows
 * `connecting` meanwhile); one closed as `replaced` or `logged-out` is not.
 */
export class RemoteNetwork implements DeviceNetwork {
  private readonly client: SimClient
  private readonly links = new Map<string, PendingLink>()
  private readonly connections = new Map<string, Connection>()
  private stopped = false

  constructor(
    url: string,
    private readonly logger: () => Logger | undefined,
    private readonly retryMs = { first: 250, max: 5_000 },
  ) {
    this.client = new SimClient(url)
  }

  async beginLink(deviceId: string, endpoint: DeviceEndpoint, challenge: LinkChallengeSpec): Promise<void> {
    await this.dropLink(deviceId)
    const path = `/_sim/devices/${encodeURIComponent(deviceId)}/link`
    const stream = await this.client
      .openStream(path, challenge, async (frame, first) => {
        if (frame.type !== 'linked' || first.type !== 'linking') return
        await this.ack(first.connection, frame.seq, await failureOf(endpoint.linked(deviceId, { phone: frame.phone, secret: frame.secret })))
      })
      .catch((err: unknown) => {
        throw err instanceof StreamRefused ? errorOfAnswer(err.status, err.body) : err
      })
    if (stream.first.type !== 'linking') {
      stream.destroy()
      throw new TransportError('failed', `the simulator answered a link with ${stream.first.type}`)
    }
    const link: PendingLink = { endpoint, stream, id: stream.first.connection }
    this.links.set(deviceId, link)
    void stream.ended.then(() => this.links.get(deviceId) === link && this.links.delete(deviceId))
  }

  async cancelLink(deviceId: string, endpoint: DeviceEndpoint): Promise<void> {
    if (this.links.get(deviceId)?.endpoint === endpoint) await this.dropLink(deviceId)
  }

  async connect(deviceId: string, credentials: DeviceCredentials, endpoint: DeviceEndpoint): Promise<ConnectResult> {
    await this.drop(deviceId)
    const connection: Connection = { deviceId, endpoint, credentials, failures: 0 }
    this.connections.set(deviceId, connection)
    try {
      const lid = await this.attempt(connection)
      return lid ? { state: 'open', lid } : { state: 'open' }
    } catch (err) {
      if (refusal(err)) {
        this.connections.delete(deviceId)
        return { state: 'logged-out', reason: err.message }
      }
      this.logger()?.warn({ deviceId, err }, 'simulator connection failed; retrying')
      this.retry(connection)
      return { state: 'connecting', reason: (err as Error).message }
    }
  }

  async flush(deviceId: string, endpoint: DeviceEndpoint): Promise<void> {
    const connection = this.connections.get(deviceId)
    if (connection?.endpoint !== endpoint || connection.id === undefined || connection.openSeq === undefined) return
    const seq = connection.openSeq
    connection.openSeq = undefined
    await this.ack(connection.id, seq)
  }

  async disconnect(deviceId: string, endpoint: DeviceEndpoint): Promise<void> {
    await this.cancelLink(deviceId, endpoint)
    if (this.connections.get(deviceId)?.endpoint === endpoint) await this.drop(deviceId)
  }

  /**
   * The server hears of it first, then the connection is closed: a logout that fails (or is given up
   * through `signal`) before the server unlinked leaves the connection as it was. The server closes
   * this connection as `logged-out` when it unlinks: that is the logout's own doing, not reported.
   */
  async logout(deviceId: string, credentials: DeviceCredentials | undefined, endpoint: DeviceEndpoint, signal?: AbortSignal): Promise<void> {
    const held = this.connections.get(deviceId)
    const mine = held?.endpoint === endpoint ? held : undefined
    if (credentials) {
      if (mine) mine.loggingOut = true
      await this.client.call('POST', `/_sim/devices/${encodeURIComponent(deviceId)}/logout`, credentials, undefined, signal).catch((err: unknown) => {
        if (mine?.unlinked) return // the answer was lost, but the server closed the connection as unlinked: it heard
        if (mine) mine.loggingOut = false
        throw err
      })
    }
    await this.disconnect(deviceId, endpoint)
  }

  async sendFromDevice(deviceId: string, to: string, message: OutgoingMessage): Promise<SentMessage> {
    return this.client.call<SentMessage>('POST', this.commandPath(deviceId, 'send'), { to, message: encodeOutgoing(message) })
  }

  async markRead(deviceId: string, target: MessageRef): Promise<void> {
    await this.client.call('POST', this.commandPath(deviceId, 'read'), { target })
  }

  async groupInfo(deviceId: string, group: GroupRef): Promise<GroupInfo | undefined> {
    return (await this.client.call<{ group: GroupInfo | null }>('POST', this.commandPath(deviceId, 'group-info'), { group })).group ?? undefined
  }

  async groupCreate(deviceId: string, subject: string, participants: string[]): Promise<GroupInfo> {
    return (await this.client.call<{ group: GroupInfo }>('POST', this.commandPath(deviceId, 'group-create'), { subject, participants })).group
  }

  async groupJoin(deviceId: string, invite: string): Promise<string | undefined> {
    return (await this.client.call<{ id: string | null }>('POST', this.commandPath(deviceId, 'group-join'), { invite })).id ?? undefined
  }

  /** GET the server's stats: throws (`unreachable`, `timeout` after 5 s) when it does not answer. */
  async ping(): Promise<void> {
    await this.client.call('GET', '/_sim/stats', undefined, 5_000)
  }

  async close(): Promise<void> {
    this.stopped = true
    await Promise.all([...this.links.keys()].map(deviceId => this.dropLink(deviceId)))
    await Promise.all([...this.connections.keys()].map(deviceId => this.drop(deviceId)))
    this.client.close()
  }

  // --- Internal helpers ---

  /** Open the connection's stream; resolves with the LID the server reports. Frames after `open` go to the endpoint. */
  private async attempt(connection: Connection): Promise<string | undefined> {
    const { deviceId, endpoint } = connection
    const stream = await this.client.openStream(`/_sim/devices/${encodeURIComponent(deviceId)}/connect`, connection.credentials, async (frame, first) => {
      if (frame.type !== 'message' || first.type !== 'open') return
      // A message the gateway failed to take is acked with the error: the server keeps it and hands it again.
      await this.ack(first.connection, frame.seq, await failureOf(endpoint.receive(deviceId, frame.message)))
    })
    const first = stream.first
    if (first.type !== 'open') {
      stream.destroy()
      throw new TransportError('failed', `the simulator answered a connection with ${first.type}`)
    }
    if (connection.closing || this.connections.get(deviceId) !== connection) {
      await this.client.call('DELETE', `/_sim/connections/${first.connection}`).catch(() => undefined)
      stream.destroy()
      throw new TransportError('not-connected', 'the connection was closed while it opened')
    }
    Object.assign(connection, { id: first.connection, stream, openSeq: first.seq, failures: 0 })
    void stream.ended.then(({ closed, error }) => this.ended(connection, stream, closed?.state === 'closed' ? undefined : closed, error))
    return first.lid
  }

  /** A stream ended: closed for good (replaced, logged out), or lost (then retried). */
  private async ended(
    connection: Connection,
    stream: FrameStream,
    closed: Extract<Frame, { type: 'closed' }> | undefined,
    error: Error | undefined,
  ): Promise<void> {
    const { deviceId, endpoint } = connection
    if (connection.stream !== stream || connection.closing || this.connections.get(deviceId) !== connection) return
    Object.assign(connection, { id: undefined, stream: undefined, openSeq: undefined })
    if (closed?.state === 'logged-out' && connection.loggingOut) {
      connection.unlinked = true
      this.connections.delete(deviceId)
      return
    }
    if (closed && closed.state !== 'closed') {
      this.connections.delete(deviceId)
      await endpoint.closed(deviceId, closed.state, closed.reason)
      return
    }
    const reason = `lost the simulator connection${error ? `: ${error.message}` : ''}`
    this.logger()?.warn({ deviceId, err: error }, 'simulator connection lost; reconnecting')
    await endpoint.interrupted?.(deviceId, reason)
    this.retry(connection)
  }

  /** Try the connection again after a backoff, until it opens, is refused, or is closed. */
  private retry(connection: Connection): void {
    if (this.stopped || connection.closing) return
    const delay = Math.min(this.retryMs.first * 2 ** connection.failures++, this.retryMs.max)
    connection.timer = setTimeout(async () => {
      if (connection.closing || this.connections.get(connection.deviceId) !== connection) return
      try {
        const lid = await this.attempt(connection)
        await connection.endpoint.resumed?.(connection.deviceId, lid)
      } catch (err) {
        if (!refusal(err)) return this.retry(connection)
        if (this.connections.get(connection.deviceId) === connection) this.connections.delete(connection.deviceId)
        await connection.endpoint.closed(connection.deviceId, 'logged-out', err.message)
      }
    }, delay)
    connection.timer.unref()
  }

  /** End this transport's connection of the device: the server detaches it, then the stream goes. */
  private async drop(deviceId: string): Promise<void> {
    const connection = this.connections.get(deviceId)
    if (!connection) return
    this.connections.delete(deviceId)
    connection.closing = true
    clearTimeout(connection.timer)
    if (connection.id !== undefined) await this.client.call('DELETE', `/_sim/connections/${connection.id}`, undefined, QUICK_MS).catch(() => undefined)
    connection.stream?.destroy()
  }

  private async dropLink(deviceId: string): Promise<void> {
    const link = this.links.get(deviceId)
    if (!link) return
    this.links.delete(deviceId)
    await this.client.call('DELETE', `/_sim/connections/${link.id}`, undefined, QUICK_MS).catch(() => undefined)
    link.stream.destroy()
  }

  private commandPath(deviceId: string, command: string): string {
    const id = this.connections.get(deviceId)?.id
    if (id === undefined) throw new TransportError('not-connected', 'the device is not connected')
    return `/_sim/connections/${id}/${command}`
  }

  private async ack(connectionId: string, seq: number, error?: Ack['error']): Promise<void> {
    await this.client.call('POST', `/_sim/connections/${connectionId}/ack`, error ? { seq, error } : { seq }, QUICK_MS).catch(err => {
      this.logger()?.warn({ err, seq }, 'simulator ack not delivered')
    })
  }
}

/** How long closing a connection or acking a frame may take (a stuck server must not hold a shutdown). */
const QUICK_MS = 5_000

/** How a frame's handling ended, as its ack's `error`: undefined when it succeeded. */
async function failureOf(handling: Promise<void>): Promise<Ack['error']> {
  return handling.then(
    () => undefined,
    (err: unknown) =>
      err instanceof TransportError ? { code: err.code, message: err.message } : { code: 'failed', message: String((err as Error)?.message ?? err) },
  )
}

/** The server refused the credentials (or the phone unlinked the device): the device is logged out. */
function refusal(err: unknown): err is StreamRefused {
  return err instanceof StreamRefused && (err.status === 401 || err.status === 410)
}
