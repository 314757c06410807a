import type { BinaryNode } from '@whiskeysockets/baileys'
import { importOptional } from 'zapgate/adapter-kit'

/** The Baileys module: the peer is built from its exported primitives (Noise, binary nodes, protos, Curve, signal). */
export type Baileys = typeof import('@whiskeysockets/baileys')

/** Import Baileys, the optional peer package, naming it when it is missing. */
export function loadBaileys(): Promise<Baileys> {
  return importOptional('@whiskeysockets/baileys', 'The WhatsApp peer (zapgate/adapters/wa-peer)', () => import('@whiskeysockets/baileys'), '7.0.0-rc14')
}

/** The children of a node (none when its content is bytes or text). */
export function children(node: BinaryNode | undefined): BinaryNode[] {
  return Array.isArray(node?.content) ? node.content : []
}

/** The first child with `tag`. */
export function child(node: BinaryNode | undefined, tag: string): BinaryNode | undefined {
  return children(node).find(c => c.tag === tag)
}

/** The bytes of a node's content (text is UTF-8 encoded). */
export function bytes(node: BinaryNode | undefined): Buffer | undefined {
  const content = node?.content
  if (content instanceof Uint8Array) return Buffer.from(content)
  if (typeof content === 'string') return Buffer.from(content, 'utf8')
  return undefined
}

/** A result iq answering `iq`, with `content` when given. */
export function iqResult(iq: BinaryNode, content?: BinaryNode[]): BinaryNode {
  return { tag: 'iq', attrs: { from: 's.whatsapp.net', type: 'result', id: iq.attrs.id }, ...(content ? { content } : {}) }
}

/** A silent logger in the shape Baileys' signal code expects. */
export const quietLogger = {
  level: 'silent',
  child() {
    return quietLogger
  },
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error() {},
}

/** `n` as a big-endian byte string of `size` bytes. */
export function bigEndian(n: number, size: number): Buffer {
  const buffer = Buffer.alloc(size)
  buffer.writeUIntBE(n, 0, size)
  return buffer
}
