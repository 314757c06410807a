import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** What the file server answers for a path. */
export interface ServedFile {
  body: Buffer
  type?: string
  status?: number
  /** Wait this long before answering. */
  delayMs?: number
  /** Send the headers (Content-Length included) at once and the body this long after. */
  bodyDelayMs?: number
  /** Send no Content-Length (chunked), so only the streamed size tells. */
  chunked?: boolean
  /** More headers (a value's characters go out as its bytes: Latin-1). */
  headers?: Record<string, string>
}

/** A local HTTP server that serves fixed files (for media URL tests). */
export interface FileServer {
  url: string
  /** Paths requested so far. */
  requests: string[]
  /** Paths served in full, and paths whose client went away before that (aborted downloads). */
  served: string[]
  aborted: string[]
  stop(): Promise<void>
}

/** Serve `files` (by path) on 127.0.0.1; unknown paths answer 404. */
export async function fileServer(files: Record<string, ServedFile>): Promise<FileServer> {
  const requests: string[] = []
  const served: string[] = []
  const aborted: string[] = []
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    requests.push(path)
    res.on('close', () => (res.writableFinished ? served : aborted).push(path))
    const file = files[path]
    if (!file) {
      res.writeHead(404).end('not found')
      return
    }
    const answer = () => {
      const headers: Record<string, string> = { ...file.headers }
      if (file.type) headers['content-type'] = file.type
      if (!file.chunked) headers['content-length'] = String(file.body.length)
      res.writeHead(file.status ?? 200, headers)
      if (file.chunked) {
        for (let i = 0; i < file.body.length; i += 64 * 1024) res.write(file.body.subarray(i, i + 64 * 1024))
        res.end()
      } else if (file.bodyDelayMs) {
        res.flushHeaders()
        setTimeout(() => res.end(file.body), file.bodyDelayMs).unref()
      } else res.end(file.body)
    }
    if (file.delayMs)
      setTimeout(answer, file.delayMs).unref() // a stopped server does not wait for it
    else answer()
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    served,
    aborted,
    stop: () =>
      new Promise(resolve => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
