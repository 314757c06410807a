import { uniqueTag } from '../../security/keys.ts'
import { signedHeaders } from './signature.ts'
import { DEFAULT_FORWARD_TIMEOUT_MS, ForwardFailedError, connectionFailure, forwardOperation, holderAnswer, targetOf, undiciAgent } from './send.ts'
import type { ForwardAnswer, ForwardRequest } from './send.ts'

/** The path of a batch of forwards on an instance, under its mount prefix (batch-receive.ts): not an operation, answered only to a signed forward. */
export const BATCH_PATH = '/_zapgate/forwards'

/** At most this many forwards travel in one batch. */
const MAX_BATCH = 32

/** A forward with a larger body (or with uploads) travels on its own; a batch is at most this many bytes, its items' paths and clients included. */
const MAX_BATCHED_BYTES = 64 * 1024

/** One line of a batch's answer (NDJSON, a line per forward as each is done): the forward's index in the batch, and the holder's answer (the forwarder relays the headers a plain forward's would be). */
export interface BatchAnswerLine {
  i: number
  status: number
  headers: Record<string, string>
  body: Record<string, unknown>
}

interface Waiting {
  request: ForwardRequest
  /** Its item of a batch's JSON (batchItem), made when a batch is weighed. */
  item?: Buffer[]
  resolve(answer: ForwardAnswer): void
  reject(err: unknown): void
}

/**
 * Forwards that coalesce: while a forward to a holder is on its way (until the head of its answer
 * comes back, at most MAX_WAIT_MS), the next ones to that holder wait, and then travel together in
 * one signed request to its BATCH_PATH, each answered on its own line as soon as it is done (a slow
 * one holds none of the others back). A forward with nothing on its way goes at once, as a plain
 * forward when alone. Two forwards in one request cost the holder one HTTP exchange, not two
 * (bench/README.md). What each forward is, and every answer, is as with plain forwards: never
 * retried (a broken batch fails each forward still unanswered as `broken`).
 */
export function coalescedForwards(): (request: ForwardRequest) => Promise<ForwardAnswer> {
  const lanes = new Map<string, Lane>()
  const unbatched = new Set<string>() // holders without a batch path: everything goes to them alone
  const newLane = (key: string) =>
    new Lane(
      () => lanes.delete(key),
      () => void (unbatched.size >= 256 && unbatched.clear(), unbatched.add(key)),
    )
  return request => {
    const key = `${request.to} ${request.baseUrl}`
    if (request.uploads?.size || !request.raw || request.raw.length > MAX_BATCHED_BYTES || unbatched.has(key)) return forwardOperation(request)
    const lane = lanes.get(key) ?? lanes.set(key, newLane(key)).get(key)!
    return new Promise((resolve, reject) => lane.add({ request, resolve, reject }))
  }
}

/** How long forwards to a holder wait at most for the one on its way before them (bench/README.md). */
const MAX_WAIT_MS = 2

/** The forwards to one holder: sent at once when nothing is on its way, else gathered until it is (or MAX_WAIT_MS passed). */
class Lane {
  private waiting: Waiting[] = []
  /** The send on its way, counted (its own `release` ends only it), or 0. */
  private onItsWay = 0
  private sends = 0
  private scheduled = false
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly idle: () => void,
    private readonly noBatches: () => void,
  ) {}

  add(waiting: Waiting): void {
    this.waiting.push(waiting)
    if (!this.onItsWay && !this.scheduled) ((this.scheduled = true), setImmediate(this.flush)) // after this turn: the requests read with it join
  }

  private readonly flush = () => {
    this.scheduled = false
    // At most MAX_BATCH forwards of MAX_BATCHED_BYTES in all, items and their commas weighed (within the holder's forwarded body limit whatever its body limit), at least one; one alone is not made an item.
    const size = (waiting: Waiting) => (waiting.item ??= batchItem(waiting.request)).reduce((sum, part) => sum + part.length, COMMA.length)
    let [count, bytes] = [1, this.waiting.length > 1 ? BATCH_START.length + BATCH_END.length + size(this.waiting[0]!) : 0]
    while (count < Math.min(MAX_BATCH, this.waiting.length) && bytes + size(this.waiting[count]!) <= MAX_BATCHED_BYTES) bytes += size(this.waiting[count++]!)
    const batch = this.waiting.splice(0, count)
    if (batch.length === 0) return this.idle()
    const send = (this.onItsWay = ++this.sends)
    const arrived = () => this.release(send)
    this.timer = setTimeout(arrived, MAX_WAIT_MS)
    if (batch.length > 1) return void forwardBatch(batch, arrived, this.noBatches)
    const [{ request, resolve, reject }] = batch as [Waiting]
    forwardOperation(request).then(resolve, reject).finally(arrived)
  }

  private release(send: number): void {
    if (send !== this.onItsWay) return // an earlier send, already let go
    this.onItsWay = 0
    clearTimeout(this.timer)
    if (this.waiting.length > 0) ((this.scheduled = true), setImmediate(this.flush))
    else this.idle()
  }
}

// --- Internal helpers ---

/** POST the forwards as one batch (the first one's holder, secret and time-out stand for all: one lane), each settled by its answer line, the rest failed at the end; `arrived` once the answer's head is in (or it failed); `unbatched` when the holder has no batch path (each then sent alone). */
async function forwardBatch(batch: Waiting[], arrived: () => void, unbatched: () => void): Promise<void> {
  const pending = new Set(batch)
  const settle = (line: BatchAnswerLine) => {
    const waiting = batch[line.i]
    const answer = holderAnswer(line.status, line.headers, JSON.stringify(line.body), line.body)
    if (waiting && pending.delete(waiting)) waiting.resolve(answer)
  }
  let failure: ForwardFailedError | undefined
  try {
    const { baseUrl, secret, from, to, timeoutMs = DEFAULT_FORWARD_TIMEOUT_MS } = batch[0]!.request
    const deadline = Date.now() + timeoutMs // the whole answer within it, as a plain forward's (postOnce): its head comes with its first line
    const body = Buffer.concat([BATCH_START, ...batch.flatMap((waiting, i) => (i ? [COMMA, ...waiting.item!] : waiting.item!)), BATCH_END])
    const { origin, prefix } = targetOf(baseUrl)
    const path = prefix + BATCH_PATH
    const headers = signedHeaders(secret, { method: 'POST', path, timestamp: Date.now(), nonce: uniqueTag(), from, to, body })
    headers['content-type'] = 'application/json'
    const answer = await (await undiciAgent()).request({ origin, path, method: 'POST', headers, body, headersTimeout: timeoutMs, bodyTimeout: timeoutMs })
    arrived()
    const type = String(answer.headers['content-type'])
    if (!type.startsWith(NDJSON)) {
      const timer = setTimeout(() => answer.body.destroy(new ForwardFailedError('timeout')), Math.max(1, deadline - Date.now()))
      const text = await answer.body.text().finally(() => clearTimeout(timer))
      // No batch path there (an instance of a version before batches, in a rolling upgrade: its host's 404, text or JSON as the host words it;
      // the batch path itself never answers 404): nothing ran, so each goes alone.
      if (answer.statusCode === 404) return void (unbatched(), pending.forEach(sendAlone), pending.clear())
      // Refused as a whole (shutting down, a bad signature): that answer is each forward's, as a plain forward would have had it.
      const whole = holderAnswer(answer.statusCode, answer.headers, text)
      for (const waiting of pending) waiting.resolve(whole)
      pending.clear()
      return
    }
    await readLines(answer.body, Math.max(1, deadline - Date.now()), settle)
  } catch (err) {
    failure = err instanceof ForwardFailedError ? err : new ForwardFailedError(err instanceof SyntaxError ? 'bad-answer' : connectionFailure(err), err)
  } finally {
    arrived()
    for (const waiting of pending) waiting.reject(failure ?? new ForwardFailedError('broken'))
  }
}

const NDJSON = 'application/x-ndjson'

const sendAlone = ({ request, resolve, reject }: Waiting) => void forwardOperation(request).then(resolve, reject)

/** A batch's JSON around its items, and between them. */
const [BATCH_START, BATCH_END, COMMA, ITEM_END] = ['{"items":[', ']}', ',', '}'].map(text => Buffer.from(text)) as [Buffer, Buffer, Buffer, Buffer]

/** A forward's item of a batch's JSON, in parts: its path, client and body, the body's bytes as they came (a JSON object the forwarder parsed), not serialised again, less a byte order mark (parseJson skips one; inside the batch's JSON it is no JSON). */
function batchItem(request: ForwardRequest): Buffer[] {
  const head = {
    path: request.path,
    ...(request.clientIp ? { clientIp: request.clientIp } : {}),
    ...(request.clientBaseUrl ? { baseUrl: request.clientBaseUrl } : {}),
  }
  const raw = request.raw!
  return [Buffer.from(`${JSON.stringify(head).slice(0, -1)},"body":`), raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf ? raw.subarray(3) : raw, ITEM_END]
}

/** Call `onLine` for each answer line as it arrives; rejects on a line that is not JSON, a broken stream, or past `timeoutMs` for the rest of the answer. */
function readLines(stream: NodeJS.ReadableStream & { destroy(err?: Error): void }, timeoutMs: number, onLine: (line: BatchAnswerLine) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => stream.destroy(new ForwardFailedError('timeout')), timeoutMs)
    let rest = ''
    stream.setEncoding('utf8')
    stream.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n')
      rest = lines.pop()!
      try {
        for (const line of lines) if (line !== '') onLine(JSON.parse(line) as BatchAnswerLine)
      } catch (err) {
        stream.destroy(err as Error)
      }
    })
    stream.once('error', err => (clearTimeout(timer), reject(err)))
    stream.once('end', () => (clearTimeout(timer), resolve()))
  })
}
