import { readFileSync } from 'node:fs'

/** A request/answer pair of the API reference (docs/api.md, "The API"), with the heading and path it is under. */
export interface ReadmeSample {
  /** The `### ` heading the pair is under, without the hashes. */
  heading: string
  /** The path of the nearest heading that names one (`POST /api/...`). */
  path: string
  request: Record<string, unknown>
  answer: Record<string, unknown>
}

const root = new URL('../..', import.meta.url).pathname

/** The README of the repository. */
export function readme(): string {
  return readFileSync(`${root}README.md`, 'utf8')
}

/** The API reference, docs/api.md. */
export function apiReference(): string {
  return readFileSync(`${root}docs/api.md`, 'utf8')
}

/**
 * The ```json request/answer pairs of the `## The API` section, in order. A heading naming
 * `POST /api/...` sets the path for the pairs under it and under the headings that follow without one.
 * Throws when a heading holds an odd number of JSON blocks (a request without its answer).
 */
export function readmeSamples(markdown = apiReference()): ReadmeSample[] {
  const start = markdown.indexOf('\n## The API\n')
  if (start < 0) throw new Error('docs/api.md has no "## The API" section')
  const end = markdown.indexOf('\n## ', start + 1)
  const lines = markdown.slice(start, end < 0 ? undefined : end).split('\n')
  const samples: ReadmeSample[] = []
  let heading = ''
  let path = ''
  let blocks: Record<string, unknown>[] = []
  const flush = () => {
    if (blocks.length % 2 !== 0) throw new Error(`docs/api.md "${heading}": a JSON request without its answer`)
    for (let i = 0; i < blocks.length; i += 2) samples.push({ heading, path, request: blocks[i], answer: blocks[i + 1] })
    blocks = []
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    if (line.startsWith('### ')) {
      flush()
      heading = line.slice(4).trim()
      path = /`POST (\/\S+)`/.exec(heading)?.[1] ?? path
    } else if (line.trim() === '```json') {
      const body: string[] = []
      while (++i < lines.length && lines[i].trim() !== '```') body.push(lines[i])
      try {
        blocks.push(JSON.parse(body.join('\n')))
      } catch (cause) {
        throw new Error(`docs/api.md "${heading}": a JSON block does not parse`, { cause })
      }
    }
  }
  flush()
  return samples
}
