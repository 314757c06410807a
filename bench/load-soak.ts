/**
 * Load soak (`npm run load`): the standalone server in a child process on the simulated network,
 * driven for LOAD_SECONDS (default 60, after a warm-up) by autocannon with a mix of operations of one account (sends
 * of several kinds, device status, group information, schedule listing) while simulated phones send
 * messages to the devices, whose webhooks a local receiver takes. Another tenant's device has its
 * webhook on the same receiver host, at a path that answers only after the gateway's time-out
 * (SLOW_HOLD_MS), and gets SLOW_PER_SECOND messages: the other devices' events must all arrive
 * anyway (checked after the load, within DRAIN_MS), and the slow one may hold at most half the
 * host's 8 connections. Prints requests per second,
 * errors, answers by status, the server's RSS and heap every 5 s (each sample taken right after a
 * full garbage collection, by bench/memory-probe.mjs preloaded in the server, so it shows what stays
 * alive) and whether RSS stopped growing after the warm-up; exits 1 on any error, any 5xx or RSS
 * still growing. Not part of `npm test`.
 *
 * A warm-up of LOAD_WARMUP_SECONDS (default 30) with the same load comes first (its errors count).
 * After the soak, a burst of 40 concurrent sends of 19 MB bodies (base64 media): each must answer
 * 200 or 429 (the process-wide media budget, 200 MB by default) and the server's RSS must stay under
 * LOAD_MEDIA_RSS_CEILING_MB (default 800: about 200 MB after the soak, plus what 200 MB of media in flight take).
 *
 *   LOAD_SECONDS=60 LOAD_WARMUP_SECONDS=30 LOAD_CONNECTIONS=16 LOAD_INCOMING_PER_SECOND=100 npm run load
 */
import { createRequire } from 'node:module'
import { request as post } from './lib/process.ts'
import { startSoakServer } from './lib/soak-server.ts'
import { soakReceiver } from './lib/soak-receiver.ts'
import { mediaBurst, type MediaBurst } from './lib/media-burst.ts'

/** autocannon (CommonJS, no bundled types): the members used here. */
const autocannon = createRequire(import.meta.url)('autocannon') as (options: Record<string, unknown>) => Promise<Result>
interface Result {
  requests: { average: number; total: number }
  latency: { p50: number; p99: number }
  errors: number
  timeouts: number
  non2xx: number
  '5xx': number
  statusCodeStats: Record<string, { count: number }>
}

const SECONDS = Number(process.env.LOAD_SECONDS ?? 60)
/** Unmeasured seconds of the same load first: V8 grows its heap reservation for a while (RSS with it). */
const WARMUP_SECONDS = Number(process.env.LOAD_WARMUP_SECONDS ?? 30)
const CONNECTIONS = Number(process.env.LOAD_CONNECTIONS ?? 16)
const INCOMING_PER_SECOND = Number(process.env.LOAD_INCOMING_PER_SECOND ?? 100)
const SAMPLE_MS = 5000
/**
 * Messages the simulated network remembers (its own bounded log, 100 000 by default, takes minutes
 * to fill at this rate): kept small so that it is full within the warm-up and what the soak watches
 * is the gateway's memory, not the simulator's log filling up.
 */
const SIM_LOG_LIMIT = Number(process.env.LOAD_SIM_LOG_LIMIT ?? 2000)
const DEVICES = 4
/** Messages a second to the slow tenant's device, whose receiver answers after SLOW_HOLD_MS (beyond the default 15 s time-out). */
const SLOW_PER_SECOND = 1
const SLOW_HOLD_MS = 20_000
/** How long the other devices' events may take to arrive once the load stops. */
const DRAIN_MS = 15_000
const CONTACTS = 40
/** The server's most RSS during the burst of 40 concurrent 19 MB media sends. */
const MEDIA_RSS_CEILING_MB = Number(process.env.LOAD_MEDIA_RSS_CEILING_MB ?? 800)
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='

async function main(): Promise<void> {
  const receiver = await soakReceiver(SLOW_HOLD_MS)
  const server = await startSoakServer({ sampleMs: SAMPLE_MS, simLogLimit: SIM_LOG_LIMIT })
  const api = (path: string, body: unknown) => post(`${server.url}${path}`, body)
  try {
    // One account, DEVICES linked devices with webhooks, a group.
    const register = await api('/api/auth', {
      auth: 'registrar',
      nome: 'Carga',
      email: 'carga@example.com',
      senha: 'senha-carga',
      telefone: '5511900000000',
      plano: '1',
    })
    const authkey = register.data.authkey as string
    const devices: { appkey: string; phone: string }[] = []
    for (let i = 0; i < DEVICES; i++) {
      const phone = `55119100000${String(i).padStart(2, '0')}`
      const created = await api('/api/v2/qrcode', { authkey, setAppkey: `carga-${i}`, webhook: `${receiver.origin}/hook` })
      await api('/_sim/scan', { authkey, appkey: created.appkey, phone })
      devices.push({ appkey: created.appkey, phone })
    }
    // Another tenant, whose receiver endpoint (same host) hangs past the time-out.
    const other = await api('/api/auth', {
      auth: 'registrar',
      nome: 'Lenta',
      email: 'lenta@example.com',
      senha: 'senha-lenta',
      telefone: '5511900000001',
      plano: '1',
    })
    const slow = await api('/api/v2/qrcode', { authkey: other.data.authkey, setAppkey: 'lenta', webhook: `${receiver.origin}/slow` })
    await api('/_sim/scan', { authkey: other.data.authkey, appkey: slow.appkey, phone: '5511910009999' })
    const contact = (i: number) => `55119200${String(i % CONTACTS).padStart(5, '0')}`
    const keys = (d: number) => ({ appkey: devices[d].appkey, authkey })
    const group = await api('/api/groups', { ...keys(0), message: 'Carga', usuarios: `${contact(1)}-${contact(2)}`, criarGrupo: 'true' })

    const requests = devices.flatMap((_, d) => {
      const to = contact(d)
      return [
        ['/api/create-message', { ...keys(d), to, message: `Olá do dispositivo ${d}` }],
        ['/api/developer', { authkey, message: `carga-${d}`, checkDispositivo: 'true' }],
        ['/api/create-message', { ...keys(d), to, latitude: '-23.5505', longitude: '-46.6333', message: 'Loja' }],
        ['/api/create-message', { ...keys(d), to, contact: 'Ana', message: '5511977770003' }],
        ['/api/create-message', { ...keys(d), to, file: PNG, descricao: 'foto' }],
        [
          '/api/create-message',
          {
            ...keys(d),
            to,
            message: 'Escolha',
            buttons: [
              { type: 'replyButton', displaytext: 'Sim' },
              { type: 'replyButton', displaytext: 'Não' },
            ],
          },
        ],
        ['/api/create-message', { ...keys(d), listaAgendamento: 'true', message: 'false' }],
        ['/api/groups', { ...keys(0), message: 'false', infoConvite: group.grupoId }],
      ] as const
    })

    // Incoming traffic: contacts write to the devices, the devices' webhooks get every message.
    let incoming = 0
    let incomingFailed = 0
    const traffic = setInterval(() => {
      for (let i = 0; i < INCOMING_PER_SECOND / 10; i++) {
        const n = incoming++
        post(`${server.url}/_sim/send`, { from: contact(n), to: devices[n % DEVICES].phone, type: 'text', text: `mensagem ${n}` }).catch(() => incomingFailed++)
      }
    }, 100)
    let slowSent = 0
    const slowTraffic = setInterval(() => {
      for (let i = 0; i < SLOW_PER_SECOND; i++)
        post(`${server.url}/_sim/send`, { from: contact(slowSent), to: '5511910009999', type: 'text', text: `lenta ${slowSent++}` }).catch(() => {})
    }, 1000)

    const samples: Sample[] = []
    const started = Date.now()
    server.onMemory(memory =>
      samples.push({
        at: (Date.now() - started) / 1000,
        rssMb: memory.rss / 2 ** 20,
        heapMb: memory.heapUsed / 2 ** 20,
        heapTotalMb: memory.heapTotal / 2 ** 20,
        externalMb: memory.external / 2 ** 20,
      }),
    )
    const run = (duration: number) =>
      autocannon({
        url: server.url,
        connections: CONNECTIONS,
        duration,
        requests: requests.map(([path, body]) => ({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })),
      })
    const warmup = WARMUP_SECONDS > 0 ? await run(WARMUP_SECONDS) : undefined
    const result = await run(SECONDS)
    if (warmup) console.log(`warm-up: ${warmup.requests.total} requests, ${warmup.errors} errors, ${warmup['5xx']} answers 5xx, ${warmup.non2xx} non-2xx`)
    for (const field of ['errors', 'timeouts', 'non2xx', '5xx'] as const) result[field] += warmup?.[field] ?? 0
    clearInterval(traffic)
    clearInterval(slowTraffic)
    for (const until = Date.now() + DRAIN_MS; receiver.texts.size < incoming - incomingFailed && Date.now() < until;)
      await new Promise(resolve => setTimeout(resolve, 200))
    const webhooks = { incoming, incomingFailed, delivered: receiver.count, texts: receiver.texts.size, slowSent, slowHeldMost: receiver.slowHeldMost }
    report(result, samples, webhooks)
    const burst = await mediaBurst(server.url, server.pid, keys(0), contact(0))
    console.log(
      `media burst: ${burst.sends} concurrent 19 MB sends: ${burst.ok} answered 200, ${burst.refused} 429, ${burst.other.length} other; server RSS peak ${burst.peakRssMb} MB (${burst.rssBeforeMb} MB before), ceiling ${MEDIA_RSS_CEILING_MB} MB`,
    )
    const verdict = judge(result, samples, webhooks, burst)
    console.log(verdict.ok ? '\nOK' : `\nFAILED: ${verdict.problems.join('; ')}`)
    process.exitCode = verdict.ok ? 0 : 1
  } finally {
    await server.stop()
    await receiver.stop()
  }
}

// --- Internal helpers ---

/** One memory sample of the server, after a full garbage collection. */
interface Sample {
  at: number
  rssMb: number
  heapMb: number
  heapTotalMb: number
  externalMb: number
}

/** What the receiver got: requests in all, distinct texts of the devices that answer at once, the slow device's most requests held at once. */
interface Webhooks {
  incoming: number
  incomingFailed: number
  delivered: number
  texts: number
  slowSent: number
  slowHeldMost: number
}

function report(result: Result, samples: Sample[], webhooks: Webhooks): void {
  const byStatus = Object.entries(result.statusCodeStats ?? {})
    .map(([code, { count }]) => `${code}: ${count}`)
    .join(', ')
  console.log(
    `\nload soak: ${SECONDS} s measured after ${WARMUP_SECONDS} s of warm-up, ${CONNECTIONS} connections, ${DEVICES} devices, ${INCOMING_PER_SECOND} incoming messages/s`,
  )
  console.log(
    `requests: ${result.requests.total} (${result.requests.average.toFixed(0)}/s average), latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms`,
  )
  console.log(`errors: ${result.errors}, timeouts: ${result.timeouts}, non-2xx: ${result.non2xx}, 5xx: ${result['5xx']} (warm-up included)`)
  console.log(`answers by status: ${byStatus}`)
  console.log(
    `incoming messages: ${webhooks.incoming} sent (${webhooks.incomingFailed} failed), webhook requests received: ${webhooks.delivered}; distinct messages delivered: ${webhooks.texts} (within ${DRAIN_MS / 1000} s of the end)`,
  )
  console.log(
    `slow tenant: ${webhooks.slowSent} messages to a receiver answering after ${SLOW_HOLD_MS / 1000} s, at most ${webhooks.slowHeldMost} of its requests held at once`,
  )
  console.log(`RSS after GC (MB) every ${SAMPLE_MS / 1000} s: ${samples.map(s => `${s.at.toFixed(0)}s ${s.rssMb.toFixed(0)}`).join(', ')}`)
  console.log(`heap used after GC (MB): ${samples.map(s => s.heapMb.toFixed(0)).join(', ')}`)
  console.log(
    `heap reserved (MB): ${samples.map(s => s.heapTotalMb.toFixed(0)).join(', ')}; external (MB): ${samples.map(s => s.externalMb.toFixed(0)).join(', ')}`,
  )
  const rss = lastSlope(samples, 'rssMb')
  const heap = lastSlope(samples, 'heapMb')
  const { before, after } = peaks(samples, rss.from)
  console.log(
    `last 30 s (from ${rss.from.toFixed(0)} s): RSS peak ${after.toFixed(0)} MB against ${before.toFixed(0)} MB before (${(((after - before) / before) * 100).toFixed(1)} %), live heap slope ${heap.slope.toFixed(2)} MB/min (RSS slope ${rss.slope.toFixed(1)} MB/min, noisy)`,
  )
}

function judge(result: Result, samples: Sample[], webhooks: Webhooks, burst: MediaBurst): { ok: boolean; problems: string[] } {
  const problems: string[] = []
  if (burst.other.length > 0) problems.push(`media burst: ${burst.other.length} answers neither 200 nor 429 (${[...new Set(burst.other)].join(', ')})`)
  if (burst.ok === 0) problems.push('media burst: no send went through')
  if (burst.peakRssMb > MEDIA_RSS_CEILING_MB) problems.push(`media burst: RSS ${burst.peakRssMb} MB, over ${MEDIA_RSS_CEILING_MB} MB`)
  const expected = webhooks.incoming - webhooks.incomingFailed
  if (webhooks.texts < expected) problems.push(`${expected - webhooks.texts} of ${expected} incoming messages not delivered beside the slow tenant`)
  if (webhooks.slowHeldMost > 4) problems.push(`the slow tenant held ${webhooks.slowHeldMost} connections to the shared host (at most 4)`)
  if (result.errors > 0 || result.timeouts > 0) problems.push(`${result.errors} errors, ${result.timeouts} timeouts`)
  if (result['5xx'] > 0) problems.push(`${result['5xx']} answers 5xx`)
  // RSS moves by 10-30 MB between samples (V8 keeps 60-110 MB of heap reserved and gives it back
  // in steps), so a 30 s slope is mostly noise. RSS counts as still growing when the last 30 s
  // reach a new high more than 10 % above everything before them; the heap after a full GC (what
  // is alive) must be flat to within 1 MB/min.
  const { before, after } = peaks(samples, lastSlope(samples, 'rssMb').from)
  if (after > before * 1.1) problems.push(`RSS still growing (peak ${after.toFixed(0)} MB in the last 30 s, ${before.toFixed(0)} MB before)`)
  const heap = lastSlope(samples, 'heapMb').slope
  if (heap > 1) problems.push(`heap after GC still growing (${heap.toFixed(1)} MB/min)`)
  return { ok: problems.length === 0, problems }
}

/** The highest RSS before `from` and from it on. */
function peaks(samples: Sample[], from: number): { before: number; after: number } {
  return { before: Math.max(...samples.filter(s => s.at < from).map(s => s.rssMb)), after: Math.max(...samples.filter(s => s.at >= from).map(s => s.rssMb)) }
}

/** Least-squares slope (MB per minute) of a measure over the samples of the last 30 s (or half the run). */
function lastSlope(samples: Sample[], measure: 'rssMb' | 'heapMb'): { slope: number; from: number } {
  const end = samples.at(-1)!.at
  const from = end - Math.min(30, SECONDS / 2)
  const window = samples.filter(s => s.at >= from)
  const n = window.length
  const mx = window.reduce((a, s) => a + s.at, 0) / n
  const my = window.reduce((a, s) => a + s[measure], 0) / n
  const sxy = window.reduce((a, s) => a + (s.at - mx) * (s[measure] - my), 0)
  const sxx = window.reduce((a, s) => a + (s.at - mx) ** 2, 0)
  return { slope: sxx === 0 ? 0 : (sxy / sxx) * 60, from }
}

await main()
