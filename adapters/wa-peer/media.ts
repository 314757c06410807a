import { execFileSync } from 'node:child_process'
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BinaryNode, MediaType, proto } from '@whiskeysockets/baileys'
import { iqResult, type Baileys } from './baileys.ts'

/**
 * WhatsApp's media hosts, locally: an HTTPS server with a certificate of its own (made with the
 * `openssl` command, self-signed for 127.0.0.1: a client trusts it through `ca`, e.g. Baileys'
 * `fetchAgent`), the `media_conn` answer that points uploads at it, uploads (`POST /mms/<type>/<token>`,
 * answered with the file's URL and direct path) and downloads (`GET <direct path>`). Files are kept
 * encrypted as uploaded; the phones encrypt and decrypt them as WhatsApp clients do (AES-256-CBC,
 * HMAC-SHA256 truncated to 10 bytes, keys from the media key by Baileys' `getMediaKeys`).
 */
export class MediaHost {
  /** The certificate (PEM) to trust: `new https.Agent({ ca })`. */
  readonly ca: string
  /** `127.0.0.1:<port>`, the host `media_conn` names. */
  readonly hostname: string
  /** Encrypted files by direct path. */
  private readonly files = new Map<string, Buffer>()

  private constructor(
    private readonly lib: Baileys,
    private readonly server: Server,
    ca: string,
  ) {
    this.ca = ca
    this.hostname = `127.0.0.1:${(server.address() as AddressInfo).port}`
  }

  /** Start the host on a free loopback port (needs the `openssl` command for its certificate). */
  static async start(lib: Baileys): Promise<MediaHost> {
    const { key, cert } = selfSignedCertificate()
    const server = createServer({ key, cert })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const host = new MediaHost(lib, server, cert)
    server.on('request', (req, res) => {
      const path = (req.url ?? '/').split('?')[0]
      if (req.method === 'POST' && path.startsWith('/mms/')) {
        const chunks: Buffer[] = []
        req.on('data', chunk => chunks.push(chunk))
        req.on('end', () => {
          const directPath = host.store(Buffer.concat(chunks))
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ url: `https://${host.hostname}${directPath}`, direct_path: directPath }))
        })
        return
      }
      const file = host.files.get(path)
      if (req.method === 'GET' && file) return void res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': file.length }).end(file)
      res.writeHead(404).end()
    })
    return host
  }

  /** The answer to a `media_conn` iq: this host, an auth token, a TTL. */
  mediaConn(iq: BinaryNode): BinaryNode {
    return iqResult(iq, [
      {
        tag: 'media_conn',
        attrs: { auth: 'wa-peer', ttl: '3600' },
        content: [{ tag: 'host', attrs: { hostname: this.hostname, maxContentLengthBytes: String(100 * 1024 * 1024) } }],
      },
    ])
  }

  /** Encrypt `data` as a WhatsApp client does and keep it here; the media fields of the message that carries it. */
  async upload(
    data: Buffer,
    type: MediaType,
  ): Promise<{ url: string; directPath: string; mediaKey: Buffer; fileSha256: Buffer; fileEncSha256: Buffer; fileLength: number }> {
    const mediaKey = randomBytes(32)
    const { iv, cipherKey, macKey } = await this.lib.getMediaKeys(mediaKey, type)
    const cipher = createCipheriv('aes-256-cbc', cipherKey, iv)
    const enc = Buffer.concat([cipher.update(data), cipher.final()])
    const mac = macOf(macKey, iv, enc)
    const file = Buffer.concat([enc, mac])
    const directPath = this.store(file)
    return {
      url: `https://${this.hostname}${directPath}`,
      directPath,
      mediaKey,
      fileSha256: sha256(data),
      fileEncSha256: sha256(file),
      fileLength: data.length,
    }
  }

  /** The decrypted bytes of a media message (its MAC and hashes checked), as a phone reads it; throws when it is not here or does not verify. */
  async download(
    media: proto.Message.IImageMessage | proto.Message.IDocumentMessage | proto.Message.IVideoMessage | proto.Message.IAudioMessage,
    type: MediaType,
  ): Promise<Buffer> {
    const path = media.directPath ?? (media.url ? new URL(media.url).pathname : undefined)
    const file = path ? this.files.get(path) : undefined
    if (!file || !media.mediaKey) throw new Error(`no media file at ${path}`)
    if (media.fileEncSha256 && !sha256(file).equals(Buffer.from(media.fileEncSha256))) throw new Error('the file does not match fileEncSha256')
    const { iv, cipherKey, macKey } = await this.lib.getMediaKeys(media.mediaKey, type)
    const enc = file.subarray(0, -10)
    const mac = macOf(macKey, iv, enc)
    if (!timingSafeEqual(mac, file.subarray(-10))) throw new Error('the media MAC does not verify')
    const decipher = createDecipheriv('aes-256-cbc', cipherKey, iv)
    const data = Buffer.concat([decipher.update(enc), decipher.final()])
    if (media.fileSha256 && !sha256(data).equals(Buffer.from(media.fileSha256))) throw new Error('the media does not match fileSha256')
    return data
  }

  /** Stop the host. */
  async close(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>(resolve => this.server.close(() => resolve()))
  }

  private store(file: Buffer): string {
    const directPath = `/v/t62.7118-24/${randomBytes(12).toString('hex')}.enc`
    this.files.set(directPath, file)
    return directPath
  }
}

// --- Internal helpers ---

/** WhatsApp's media MAC: HMAC-SHA256 over iv and ciphertext, first 10 bytes. */
function macOf(macKey: Uint8Array | undefined, iv: Uint8Array, enc: Buffer): Buffer {
  if (!macKey) throw new Error('no media MAC key')
  return createHmac('sha256', macKey).update(iv).update(enc).digest().subarray(0, 10)
}

function sha256(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest()
}

/** A self-signed certificate for 127.0.0.1 (P-256), made with the openssl command. */
function selfSignedCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'wa-peer-media-'))
  try {
    const key = join(dir, 'key.pem')
    const cert = join(dir, 'cert.pem')
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    )
    return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') }
  } catch (err) {
    throw new Error(`the peer's media host needs the openssl command for its certificate: ${(err as Error).message}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
