/** When a request first answered 200, and how many tries it took. */
export interface FirstOk {
  /** performance.now() when the 200 answer arrived. */
  at: number
  tries: number
}

/**
 * POST `body` as JSON to `url` every `intervalMs` until an answer is 200 (other statuses and
 * refused connections are tried again); throws after `timeoutMs`.
 */
export async function pollUntilOk(url: string, body: unknown, intervalMs = 10, timeoutMs = 60_000): Promise<FirstOk> {
  const started = performance.now()
  const payload = JSON.stringify(body)
  let last = ''
  for (let tries = 1; ; tries++) {
    const sent = performance.now()
    try {
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload })
      const text = await response.text()
      if (response.status === 200) return { at: performance.now(), tries }
      last = `${response.status} ${text.slice(0, 200)}`
    } catch (error) {
      last = String((error as Error).cause ?? error)
    }
    if (performance.now() - started > timeoutMs) throw new Error(`${url}: no 200 answer within ${timeoutMs} ms (last: ${last})`)
    await new Promise(resolve => setTimeout(resolve, Math.max(0, intervalMs - (performance.now() - sent))))
  }
}
