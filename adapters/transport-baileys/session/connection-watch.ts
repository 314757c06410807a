import { ConnectionProblem } from '../policy.ts'
import type { SocketLike } from '../types.ts'

/** A running watch over one socket until it opens; `stop` when it opened or closed. */
export interface ConnectionWatch {
  stop(): void
}

/**
 * Watch a new socket until it opens (or shows a QR): two ways a socket can stay `connecting` forever
 * with no close from Baileys.
 * - A refused WebSocket upgrade (a proxy's 403 or 407, an edge's 5xx): Baileys re-emits ws's
 *   `unexpected-response`, and any listener there stops ws from aborting the handshake, so no error
 *   and no close ever follow. The watch reports it at once, with the HTTP status.
 * - Anything else that never completes (a black-holed connection, a proxy that accepts and then says
 *   nothing): after `timeoutMs` without opening the watch reports it.
 * `onProblem` gets a ConnectionProblem (a plain Error, so no HTTP status is read as WhatsApp's own
 * 401/403/440); the session ends the socket and applies its reconnect policy.
 */
export function watchConnection(socket: SocketLike, timeoutMs: number, onProblem: (problem: ConnectionProblem) => void): ConnectionWatch {
  let done = false
  const report = (problem: ConnectionProblem) => {
    if (done) return
    stop()
    onProblem(problem)
  }
  const onUnexpected = (_request: unknown, response: { statusCode?: number; resume?(): unknown } | undefined) => {
    response?.resume?.() // drain the refusal's body so its connection can close
    const status = response?.statusCode
    report(new ConnectionProblem(`WhatsApp refused the connection: HTTP ${status ?? '?'} at the WebSocket upgrade (a proxy or firewall may be blocking it)`))
  }
  const timer = setTimeout(
    () => report(new ConnectionProblem(`no connection to WhatsApp within ${timeoutMs < 1_000 ? `${timeoutMs} ms` : `${Math.round(timeoutMs / 1_000)} s`}`)),
    timeoutMs,
  )
  timer.unref?.()
  socket.ws?.on('unexpected-response', onUnexpected)
  function stop(): void {
    done = true
    clearTimeout(timer)
    socket.ws?.off('unexpected-response', onUnexpected)
  }
  return { stop }
}
