import { hostname } from 'node:os'

/** Whether process `pid` of this host is alive (a process of another user counts as alive: EPERM). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** This host's name as it goes into ids and file names: letters, digits and dots only (no `-`, which separates their parts). */
export function hostTag(): string {
  return hostname().replace(/[^A-Za-z0-9.]/g, '_')
}
