import { request } from './http.ts'

/** A scrape of Prometheus text: the sum of the samples of a metric that carry `labels` (0 when none does). */
export interface Scrape {
  text: string
  value(name: string, labels?: Record<string, string>): number
}

/** GET `<url>/metrics` and parse the text exposition format (one sample per line). */
export async function scrape(url: string): Promise<Scrape> {
  const answer = await request(`${url}/metrics`)
  if (answer.status !== 200) throw new Error(`GET /metrics answered ${answer.status}`)
  return parseMetrics(answer.text)
}

/** Parse Prometheus text: samples as `name{a="b",...} value`. */
export function parseMetrics(text: string): Scrape {
  const samples: { name: string; labels: Record<string, string>; value: number }[] = []
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!match) continue
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, key, value]) => [key, value]))
    samples.push({ name: match[1], labels, value: Number(match[3]) })
  }
  return {
    text,
    value(name, labels = {}) {
      const found = samples.filter(s => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value))
      return found.reduce((sum, s) => sum + s.value, 0)
    },
  }
}
