import { readFileSync } from 'node:fs'

/** What a burst of large media sends got, and the server's resident memory meanwhile. */
export interface MediaBurst {
  sends: number
  ok: number
  /** Answered 429 (the process's media budget). */
  refused: number
  /** Anything else: other statuses and transport errors (each one a problem). */
  other: string[]
  /** The server's highest RSS during the burst (sampled every 20 ms), and before it. */
  peakRssMb: number
  rssBeforeMb: number
}

/**
 * `sends` concurrent sends of a 14.5 MB PDF as base64 (a 19.3 MB body, one buffer for all) through
 * `url`'s operation 9 on the device `appkey`: the case of issue 20.6, where 40 of them took the
 * process to 1.6 GB before the media budget. Every answer must be 200 or 429.
 */
export async function mediaBurst(url: string, pid: number, keys: { appkey: string; authkey: string }, to: string, sends = 40): Promise<MediaBurst> {
  const file = Buffer.alloc(Math.floor(14.5 * 1024 * 1024), 7)
  file.write('%PDF-1.4\n')
  const body = Buffer.from(JSON.stringify({ ...keys, to, file: file.toString('base64'), message: 'carga.pdf' }))
  const rssBeforeMb = rssMb(pid)
  let peakRssMb = rssBeforeMb
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, rssMb(pid))), 20)
  const answers = await Promise.all(
    Array.from({ length: sends }, () =>
      fetch(`${url}/api/create-message`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(
        async response => (await response.arrayBuffer(), String(response.status)),
        (err: Error) => `error ${String(err.cause ?? err)}`,
      ),
    ),
  )
  clearInterval(sampler)
  peakRssMb = Math.max(peakRssMb, rssMb(pid))
  return {
    sends,
    ok: answers.filter(a => a === '200').length,
    refused: answers.filter(a => a === '429').length,
    other: answers.filter(a => a !== '200' && a !== '429'),
    peakRssMb,
    rssBeforeMb,
  }
}

/** A process's resident memory now, in MB (Linux). */
function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Math.round(Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024)
}
