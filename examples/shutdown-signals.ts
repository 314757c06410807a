/**
 * How the servers of `npm start`, `npm run sim`, `npm run cluster` and `npm run wa-peer` take SIGTERM and SIGINT, for
 * their whole life: the first starts the graceful stop; later ones are logged and ignored, because
 * one stop may bring several (systemd's control-group stop or `kill -- -PGID` signals the server,
 * and npm forwards the same signal to it again); only a second SIGINT from a terminal (Ctrl-C
 * twice, stdin a TTY) ends the process at once. A signal that comes while the server is still
 * starting stops it as soon as it is up.
 */

/** What the handler logs through (a pino logger fits). */
interface SignalLog {
  info(fields: object, message: string): void
  warn(fields: object, message: string): void
}

/** The process-wide handler of the shutdown signals; `ready` hands it the graceful stop once there is something to stop. */
export interface ShutdownSignals {
  /** From now on the first signal (or one already received) calls `stop`. */
  ready(stop: (signal: NodeJS.Signals) => Promise<void>): void
}

/**
 * Listen to SIGTERM and SIGINT (once per process, as early as possible). `exitNow` ends the process
 * at once on a second Ctrl-C (default: exit code 130, after `beforeExit`, e.g. killing child processes).
 */
export function handleShutdownSignals(
  log: SignalLog,
  {
    interactive = process.stdin.isTTY === true,
    exitNow = (code: number) => process.exit(code),
    beforeExit = () => {},
  }: { interactive?: boolean; exitNow?: (code: number) => void; beforeExit?: () => void } = {},
): ShutdownSignals {
  let stop: ((signal: NodeJS.Signals) => Promise<void>) | undefined
  let first: NodeJS.Signals | undefined
  const begin = () =>
    void stop!(first!).catch(err => {
      log.warn({ err }, 'the graceful stop failed: exiting')
      beforeExit()
      exitNow(1)
    })
  const onSignal = (signal: NodeJS.Signals) => {
    if (first === undefined) {
      first = signal
      if (stop) begin()
      else log.info({ signal }, 'signal received while starting: stopping once started')
      return
    }
    if (signal === 'SIGINT' && interactive) {
      log.warn({ signal }, 'second Ctrl-C: exiting at once, without finishing the drain')
      beforeExit()
      exitNow(130)
      return
    }
    log.info({ signal, stopping: first }, 'signal received again during the drain: ignored')
  }
  process.on('SIGTERM', onSignal)
  process.on('SIGINT', onSignal)
  return {
    ready(stopFn) {
      stop = stopFn
      if (first !== undefined) begin()
    },
  }
}
