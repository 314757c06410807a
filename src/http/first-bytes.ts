import type { Readable } from 'node:stream'

/**
 * Resolves once `stream` has its first bytes or has ended; rejects when it fails (or closes) first.
 * Awaited before the answer begins, a failure there is still answered as an error status.
 */
export function firstBytes(stream: Readable): Promise<void> {
  return new Promise((resolve, reject) => {
    if (stream.errored || stream.destroyed) return reject(stream.errored ?? new Error('the stream closed before its first bytes'))
    if (stream.readableLength > 0 || stream.readableEnded) return resolve()
    const settle = (error?: Error | null) => {
      stream.off('readable', onReadable).off('error', settle).off('close', onClose)
      if (error) reject(error)
      else resolve()
    }
    const onReadable = () => settle()
    const onClose = () => settle(stream.errored ?? new Error('the stream closed before its first bytes'))
    stream.on('readable', onReadable).on('error', settle).on('close', onClose)
  })
}
