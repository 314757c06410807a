import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'

/** A process of this host: its pid, and on Linux its start ticks (`/proc/<pid>/stat` field 22) and boot id, so a reused pid is another process. */
export interface ProcessStamp {
  pid: number
  startTicks?: number
  bootId?: string
}

/** This process's stamp (read once). */
export function ownStamp(): ProcessStamp {
  if (own) return own
  const stat = readStat(process.pid)
  const bootId = currentBootId()
  own = { pid: process.pid, ...(stat && stat !== 'unreadable' ? { startTicks: stat.startTicks } : {}), ...(bootId ? { bootId } : {}) }
  return own
}

/** Whether the process a record names still runs: /proc/<pid>/stat on Linux (zombie, dying, reused pid: gone), else `kill(pid, 0)` (docs/scaling.md). */
export function processAlive(target: ProcessStamp | number): boolean {
  const { pid, startTicks, bootId } = typeof target === 'number' ? { pid: target } : target
  if (!(Number.isInteger(pid) && pid > 0)) return false
  if (bootId !== undefined && currentBootId() !== undefined && bootId !== currentBootId()) return false // an earlier boot: every process of it is gone
  const stat = readStat(pid)
  if (stat === 'unreadable') return signal(pid) !== 'gone'
  // No /proc entry: gone where /proc lists processes, unless it hides those of other users (hidepid).
  if (stat === undefined) return procReadable() ? signal(pid) === 'other-user' : signal(pid) !== 'gone'
  if (stat.state === 'Z' || stat.state === 'X' || stat.state === 'x') return false
  return startTicks === undefined || stat.startTicks === startTicks
}

/** This host's name as it goes into ids and file names: letters, digits and dots only (no `-`, which separates their parts). */
export function hostTag(): string {
  return hostname().replace(/[^A-Za-z0-9.]/g, '_')
}

let own: ProcessStamp | undefined
let procListed: boolean | undefined
let bootId: { value?: string } | undefined

function currentBootId(): string | undefined {
  if (!bootId) {
    try {
      bootId = { value: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined }
    } catch {
      bootId = {}
    }
  }
  return bootId.value
}

/** State and start ticks of `/proc/<pid>/stat` (fields counted from the last `)`); undefined when there is no entry, `'unreadable'` when it cannot be read. */
function readStat(pid: number): { state: string; startTicks: number } | undefined | 'unreadable' {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    return code === 'ENOENT' || code === 'ESRCH' ? undefined : 'unreadable'
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  const startTicks = Number(fields[19]) // field 22 of the line; fields[0] is field 3 (state)
  if (!fields[0] || !Number.isSafeInteger(startTicks)) return 'unreadable'
  return { state: fields[0], startTicks }
}

/** Whether this platform has a /proc to read processes from (this process's own entry is there). */
function procReadable(): boolean {
  procListed ??= readStat(process.pid) !== undefined
  return procListed
}

/** What `kill(pid, 0)` tells: the pid exists (a zombie too), belongs to another user (EPERM), or is gone. */
function signal(pid: number): 'exists' | 'other-user' | 'gone' {
  try {
    process.kill(pid, 0)
    return 'exists'
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? 'other-user' : 'gone'
  }
}
