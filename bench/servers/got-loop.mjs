/**
 * The baseline of webhook-fanout: POST one recorded delivery (`GOT_LOOP_PAYLOAD`, JSON
 * `{headers, body}`) to `GOT_LOOP_URL` with got, `GOT_LOOP_CONCURRENCY` requests in flight (default 8,
 * the webhook sender's per-host limit) over a keep-alive agent as the gateway's sender has, no retries
 * or redirects. First `GOT_LOOP_WARMUP` requests unmeasured (default 500), then `GOT_LOOP_COUNT`
 * measured; prints `DONE <count> <ms> <non2xx> <cpu ms>` and exits. Plain JavaScript run by `node` alone.
 */
import { Agent } from 'node:http'
import got from 'got'

const url = process.env.GOT_LOOP_URL
const { headers, body } = JSON.parse(process.env.GOT_LOOP_PAYLOAD)
const count = Number(process.env.GOT_LOOP_COUNT ?? 10_000)
const warmup = Number(process.env.GOT_LOOP_WARMUP ?? 500)
const concurrency = Number(process.env.GOT_LOOP_CONCURRENCY ?? 8)
const agent = { http: new Agent({ keepAlive: true }) }

/** `total` POSTs, `concurrency` at a time; how many answers were not 2xx. */
async function run(total) {
  let next = 0
  let failed = 0
  const worker = async () => {
    while (next < total) {
      next++
      const response = await got.post(url, {
        agent,
        body,
        headers,
        retry: { limit: 0 },
        followRedirect: false,
        throwHttpErrors: false,
        timeout: { request: 15_000 },
      })
      if (response.statusCode < 200 || response.statusCode > 299) failed++
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return failed
}

await run(warmup)
const started = performance.now()
const cpu = process.cpuUsage()
const failed = await run(count)
const used = process.cpuUsage(cpu)
process.stdout.write(`DONE ${count} ${(performance.now() - started).toFixed(1)} ${failed} ${((used.user + used.system) / 1000).toFixed(0)}\n`)
agent.http.destroy()
