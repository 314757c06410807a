import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A fresh temporary directory; `remove()` deletes it with everything in it. */
export interface TempDir {
  path: string
  /** A path inside the directory. */
  file(name: string): string
  remove(): Promise<void>
}

/** Create a temporary directory under `parent` (default: the OS temp dir), named `zapgate-bench-<prefix>-…`. */
export async function tempDir(prefix: string, parent = tmpdir()): Promise<TempDir> {
  const path = await mkdtemp(join(parent, `zapgate-bench-${prefix}-`))
  return { path, file: name => join(path, name), remove: () => rm(path, { recursive: true, force: true }) }
}
