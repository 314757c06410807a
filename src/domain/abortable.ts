/** `promise`, or a rejection with the signal's reason as soon as `signal` aborts (whichever comes first). */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {}) // nobody waits for it any more: its failure must not become an unhandled rejection
    return Promise.reject(signal.reason)
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      value => (signal.removeEventListener('abort', onAbort), resolve(value)),
      error => (signal.removeEventListener('abort', onAbort), reject(error)),
    )
  })
}
