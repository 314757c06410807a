import { createHash } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'

/**
 * The server side of RFC 6455 on an upgraded socket, just what the peer needs: the opening
 * handshake, reading the client's (masked) binary frames, writing unmasked binary and close frames.
 */

/** Complete the WebSocket opening handshake on an upgraded socket. */
export function acceptWebSocket(req: IncomingMessage, socket: Socket): void {
  const accept = createHash('sha1').update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64')
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`)
}

/** Refuse an upgrade with an HTTP status, as an edge or a proxy in front of WhatsApp does. */
export function refuseUpgrade(socket: Socket, status: number): void {
  socket.end(`HTTP/1.1 ${status} Refused\r\nConnection: close\r\nContent-Length: 7\r\n\r\nrefused`)
}

/** Read client frames; binary payloads go to `onData`; a ping is answered, a close is answered and ends the socket. */
export function readWebSocket(socket: Socket, onData: (data: Buffer) => void): void {
  let buffer = Buffer.alloc(0)
  socket.on('data', chunk => {
    buffer = Buffer.concat([buffer, chunk])
    for (;;) {
      if (buffer.length < 2) return
      const opcode = buffer[0] & 0x0f
      let length = buffer[1] & 0x7f
      let offset = 2
      if (length === 126) {
        if (buffer.length < 4) return
        length = buffer.readUInt16BE(2)
        offset = 4
      } else if (length === 127) {
        if (buffer.length < 10) return
        length = Number(buffer.readBigUInt64BE(2))
        offset = 10
      }
      const masked = (buffer[1] & 0x80) !== 0
      const mask = masked ? buffer.subarray(offset, offset + 4) : undefined
      if (masked) offset += 4
      if (buffer.length < offset + length) return
      const payload = Buffer.from(buffer.subarray(offset, offset + length))
      if (mask) for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i % 4]
      buffer = buffer.subarray(offset + length)
      if (opcode === 0x8) {
        socket.end(wsFrame(0x8, payload.subarray(0, 2)))
        return
      }
      if (opcode === 0x9) socket.write(wsFrame(0xa, payload))
      else if (opcode === 0x2 || opcode === 0x0) onData(payload)
    }
  })
}

/** A binary frame from the server. */
export function binaryFrame(payload: Buffer): Buffer {
  return wsFrame(0x2, payload)
}

// --- Internal helpers ---

function wsFrame(opcode: number, payload: Buffer): Buffer {
  const header =
    payload.length < 126
      ? Buffer.from([0x80 | opcode, payload.length])
      : payload.length < 65_536
        ? Buffer.from([0x80 | opcode, 126, payload.length >> 8, payload.length & 0xff])
        : Buffer.concat([Buffer.from([0x80 | opcode, 127]), bigLength(payload.length)])
  return Buffer.concat([header, payload])
}

function bigLength(length: number): Buffer {
  const buffer = Buffer.alloc(8)
  buffer.writeBigUInt64BE(BigInt(length))
  return buffer
}
