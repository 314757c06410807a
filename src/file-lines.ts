import { appendFile, open, rename, rm, stat } from 'node:fs/promises'

/**
 * Rewrite file `path` as `items` (a JSON line each) then its bytes past `start`, holding no more in
 * memory than the largest item or 1 MiB: written beside it (`<path>.closing`) and renamed over it,
 * so a crash meanwhile leaves it whole. Its new size.
 */
export async function prependJsonLines(path: string, start: number, items: unknown[]): Promise<number> {
  const next = `${path}.closing`
  await rm(next, { force: true }) // one a failed rewrite left
  for (const item of items) await appendFile(next, JSON.stringify(item) + '\n', { mode: 0o600 })
  await appendFileTail(path, start, next)
  await rename(next, path)
  return (await stat(path)).size
}

/** Append the bytes of file `from` (none when there is no such file) past `start` to file `to` (0600), 1 MiB at a time (a last line without its newline gets one): its non-blank lines, and the bytes written. */
export async function appendFileTail(from: string, start: number, to: string): Promise<{ lines: number; bytes: number }> {
  const source = await open(from, 'r').catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : Promise.reject(err)))
  if (!source) return { lines: 0, bytes: 0 }
  const block = Buffer.alloc(1 << 20)
  let [lines, bytes, blank] = [0, 0, true] // blank: no other byte than white space since the last newline
  try {
    for (let read; (read = (await source.read(block, 0, block.length, start + bytes)).bytesRead) > 0; bytes += read) {
      await appendFile(to, block.subarray(0, read), { mode: 0o600 })
      for (let i = 0; i < read; i++)
        if (block[i] === 10) [lines, blank] = [lines + (blank ? 0 : 1), true]
        else if (block[i]! > 32) blank = false
    }
  } finally {
    await source.close()
  }
  if (!blank) await appendFile(to, '\n', { mode: 0o600 })
  return { lines: lines + (blank ? 0 : 1), bytes: bytes + (blank ? 0 : 1) }
}
