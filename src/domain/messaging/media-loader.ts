import { basename } from 'node:path'
import { fileTypeFromBuffer } from 'file-type'
import { GatewayError } from '../../errors.ts'
import { MediaFetchError, type MediaFetcher } from '../../ports/media.ts'
import type { MediaPayload, OutgoingMessage } from '../../ports/transport.ts'
import type { MediaHold } from './media-budget.ts'
import { fitsDocumentFormat, mimeOfFileName, shapeOfFormat, shapeOfMime, type MediaShape } from './media-types.ts'

/** A file part of a multipart body (the shape the HTTP edge hands over). */
export interface UploadedFile {
  data: Buffer
  fileName?: string
  mimetype?: string
}

interface MediaRequest {
  /** An http(s) URL, base64, a base64 data URI, or an uploaded part. */
  source: string | UploadedFile
  /** File name shown to the recipient. */
  fileName?: string
  caption?: string
  /** Forces the kind (see shapeOfFormat). */
  format?: string
  /** The request's share of the media budget: a download holds what it has downloaded or declared (up to the largest file) while it runs, then its size. */
  hold?: MediaHold
}

interface MediaLimits {
  maxBytes: number
  timeoutMs: number
}

/** Turns the `file` of a send into bytes with a kind: a URL through the MediaFetcher, base64 or a data URI, or an uploaded part (never a local path). The kind comes from `format` (an image, video or audio one only for bytes of that kind, a document one not for bytes of another known type), else the sniffed bytes, else the declared type or the file name (as a document: bytes no sniffer knows are no image, video or audio). */
export class MediaLoader {
  constructor(
    private readonly fetcher: MediaFetcher,
    private readonly limits: MediaLimits,
  ) {}

  /** The media message for a request; a GatewayError (`invalid-input`, `media-*`) for a file that cannot be used. */
  async message(request: MediaRequest): Promise<Extract<OutgoingMessage, { kind: 'media' }>> {
    const forced = request.format === undefined ? undefined : shapeOfFormat(request.format)
    if (request.format !== undefined && !forced) throw new GatewayError('invalid-input')
    const file = await this.load(request.source, request.hold)
    const name = cleanName(request.fileName) ?? file.name
    const chosen = forced ? await fitting(forced, file.data) : await this.sniff(file, name)
    const shape = !forced && chosen.voiceNote ? await ownAudioType(file.data, chosen) : chosen // a forced one is typed by fitting (one sniff)
    const fileName = nameWithExtension(name, shape)
    const payload: MediaPayload = { data: file.data, mimetype: shape.mimetype, ...(fileName ? { fileName } : {}) }
    const caption = shape.kind === 'audio' ? undefined : request.caption
    return { kind: 'media', media: shape.kind, file: payload, ...(caption ? { caption } : {}), ...(shape.voiceNote ? { voiceNote: true } : {}) }
  }

  /** The cards' images from their URLs: JPEG, PNG or WebP, else 400. On a failure the other downloads are aborted and waited for (till then they hold their share of the budget), then the first failure is thrown. */
  async cardImages(urls: string[], hold?: MediaHold): Promise<MediaPayload[]> {
    const stop = new AbortController()
    const image = async (url: string): Promise<MediaPayload> => {
      if (!isHttpUrl(url)) throw new GatewayError('invalid-input')
      const file = await this.load(url, hold, stop.signal)
      const sniffed = await fileTypeFromBuffer(file.data).catch(() => undefined)
      if (!sniffed || !['image/jpeg', 'image/png', 'image/webp'].includes(sniffed.mime)) throw new GatewayError('card-image-invalid')
      return { data: file.data, mimetype: sniffed.mime, ...(file.name ? { fileName: file.name } : {}) }
    }
    const images = await Promise.all(urls.map(url => image(url).catch(err => void (stop.signal.aborted || stop.abort(err)))))
    if (stop.signal.aborted) throw stop.signal.reason
    return images as MediaPayload[]
  }

  private async load(source: string | UploadedFile, hold: MediaHold | undefined, signal?: AbortSignal): Promise<LoadedFile> {
    let file: LoadedFile
    const url = typeof source === 'string' && isHttpUrl(source.trim())
    if (typeof source !== 'string') file = { data: source.data, declared: source.mimetype, name: cleanName(source.fileName) }
    else if (url) file = await this.heldDownload(source.trim(), hold, signal)
    else file = await decodeInline(source)
    // An empty download is the file server's failure (200 or 204 with no bytes), not the client's field: 400, never 401.
    if (file.data.length === 0) throw url ? new GatewayError('media-bad-status', { detail: 'arquivo vazio' }) : new GatewayError('invalid-input')
    if (file.data.length > this.limits.maxBytes) throw this.tooLarge()
    if (!url && hold?.held() === 0) hold.add(file.data.length) // a body that held nothing (no Content-Length): its media counts once decoded
    return file
  }

  /**
   * A download holds of the budget the bytes its fetcher reports (the declared size, then what arrives past it), at most the largest
   * file, then only its size; one the budget cannot take is aborted and answered media-budget-exceeded (429). A fetcher that does not
   * report bytes holds the largest file's bytes while it runs.
   */
  private async heldDownload(url: string, hold: MediaHold | undefined, signal?: AbortSignal): Promise<LoadedFile> {
    const counted = hold && this.fetcher.reportsBytes ? countedBytes(hold, this.limits.maxBytes, signal) : undefined
    if (!counted) hold?.add(this.limits.maxBytes)
    const limits = counted ? { ...this.limits, signal: counted.signal, onBytes: counted.onBytes } : signal ? { ...this.limits, signal } : this.limits
    const held = () => (counted ? counted.held() : this.limits.maxBytes)
    try {
      const fetched = await this.fetcher.fetch(url, limits)
      if (counted?.refused()) throw counted.refused()
      hold?.add(fetched.data.length - held())
      return { data: fetched.data, declared: fetched.contentType, name: cleanName(fetched.fileName) }
    } catch (err) {
      hold?.add(-held())
      const refused = counted?.refused()
      if (refused) throw refused
      if (!(err instanceof MediaFetchError)) throw err
      if (err.reason === 'too-large') throw this.tooLarge(err)
      throw new GatewayError(FETCH_ERRORS[err.reason], { cause: err, ...(err.statusCode ? { detail: `HTTP ${err.statusCode}` } : {}) })
    } finally {
      counted?.done()
    }
  }

  private async sniff(file: LoadedFile, name: string | undefined): Promise<MediaShape> {
    const sniffed = await fileTypeFromBuffer(file.data).catch(() => undefined)
    const declared = file.declared?.split(';')[0].trim().toLowerCase()
    const usable = declared && declared !== 'application/octet-stream' && /^[a-z]+\/[a-z0-9.+-]+$/.test(declared) ? declared : undefined
    // A container the sniffer names generically (OLE's: .doc, .xls, .ppt; a zip): the document type declared or named says what it is.
    const specific =
      sniffed && CONTAINERS.has(sniffed.mime) ? [usable, mimeOfFileName(name)].find(mime => mime && shapeOfMime(mime).kind === 'document') : undefined
    const mime = specific ?? sniffed?.mime ?? usable ?? mimeOfFileName(name) ?? 'application/octet-stream'
    const known = shapeOfMime(mime)
    // A type the sniffer knows and TYPES does not (RAR, AVI, FLAC): the extension the sniffer gives it.
    const shape = !known.extension && sniffed && mime === sniffed.mime ? { ...known, extension: sniffed.ext } : known
    // Bytes no sniffer knows are not the image, video or audio a type or name claims (every inline type has a signature): a document, which the phone only saves.
    return sniffed || shape.kind === 'document'
      ? shape
      : { kind: 'document', mimetype: shape.mimetype.split(';')[0]!, ...(shape.extension ? { extension: shape.extension } : {}) }
  }

  private tooLarge(cause?: unknown): GatewayError {
    const mb = Math.round((this.limits.maxBytes / 1024 / 1024) * 10) / 10
    return new GatewayError('media-too-large', { cause, detail: `${mb} MB` })
  }
}

/** The bytes a reporting download holds of `hold`: grown by `onBytes` up to `maxBytes`; past the budget the download is aborted and `refused` says why. */
function countedBytes(hold: MediaHold, maxBytes: number, outer: AbortSignal | undefined) {
  const stop = new AbortController()
  const follow = () => stop.abort(outer?.reason)
  if (outer?.aborted) follow()
  else outer?.addEventListener('abort', follow)
  let held = 0
  let refusal: unknown
  return {
    signal: stop.signal,
    held: () => held,
    refused: () => refusal,
    done: () => outer?.removeEventListener('abort', follow),
    onBytes: (bytes: number) => {
      const next = Math.min(Math.max(0, bytes), maxBytes)
      if (refusal !== undefined || next <= held) return
      try {
        hold.add(next - held)
        held = next
      } catch (err) {
        refusal = err
        stop.abort(err)
      }
    },
  }
}

const FETCH_ERRORS = { refused: 'media-refused', timeout: 'media-timeout', unreachable: 'media-unreachable', 'bad-status': 'media-bad-status' } as const

interface LoadedFile {
  data: Buffer
  /** Mime type declared by the source (upload, data URI, HTTP Content-Type). */
  declared?: string
  name?: string
}

function isHttpUrl(value: string): boolean {
  return /^https?:\/\//i.test(value)
}

/** Base64 (standard or URL-safe) or a base64 data URI (spaces after its `;` as browsers write them: `data:audio/ogg; codecs=opus;base64,`), else 401; a value starting with `/` (a path?) only when its bytes are a known file type. */
async function decodeInline(source: string): Promise<LoadedFile> {
  const dataUri = /^data:([a-z0-9.+-]+\/[a-z0-9.+-]+)?((?:;[ \t]*[a-z0-9-]+=[^;,]*)*);[ \t]*base64,/i.exec(source.trimStart())
  const text = (dataUri ? source.trimStart().slice(dataUri[0].length) : source).replace(/\s+/g, '')
  if (text.length === 0 || text.length % 4 === 1 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) throw new GatewayError('invalid-input')
  const data = Buffer.from(text, 'base64')
  if (!dataUri && text.startsWith('/') && !(await fileTypeFromBuffer(data).catch(() => undefined))) throw new GatewayError('invalid-input')
  return { data, ...(dataUri?.[1] ? { declared: dataUri[1].toLowerCase() } : {}) }
}

/**
 * A forced kind takes only bytes that can be it, else 401: an image, video or audio kind only bytes the sniffer knows as that kind
 * (`format: ogg` on a PDF or an image would go as a voice note labelled Opus, `png` on a PDF as a broken image); an audio kind also a
 * container of sound as well as video (a browser's WebM voice, a phone's MP4 recording: file-type calls them video), and a voice note keeps
 * its bytes' own audio type; a document type only bytes the sniffer does not know as another type (`pdf` on a PNG would go as a PDF no
 * reader opens; see fitsDocumentFormat).
 */
async function fitting(forced: MediaShape, data: Buffer): Promise<MediaShape> {
  const sniffed = await fileTypeFromBuffer(data).catch(() => undefined)
  if (forced.kind === 'document') {
    if (!fitsDocumentFormat(forced, sniffed)) throw new GatewayError('invalid-input')
    return forced
  }
  const own = forced.kind === 'audio' ? audioType(sniffed?.mime) : sniffed?.mime.startsWith(`${forced.kind}/`) && sniffed.mime
  if (!own) throw new GatewayError('invalid-input')
  return forced.voiceNote ? withOwnType(forced, own) : forced
}

/** A voice note whose bytes are other audio than Ogg/Opus (Ogg Vorbis) keeps their own type: the transport converts them, or sends them as the ordinary audio they are, never labelled Opus. */
async function ownAudioType(data: Buffer, shape: MediaShape): Promise<MediaShape> {
  const own = audioType((await fileTypeFromBuffer(data).catch(() => undefined))?.mime)
  return own ? withOwnType(shape, own) : shape
}

function withOwnType(shape: MediaShape, mimetype: string): MediaShape {
  return mimetype !== shape.mimetype ? { ...shape, mimetype } : shape
}

/** The audio type of sniffed bytes: an audio type as is, a container of sound as well as video as its audio type, else undefined. */
function audioType(sniffed: string | undefined): string | undefined {
  return sniffed?.startsWith('audio/') ? sniffed : sniffed && AUDIO_CONTAINERS[sniffed]
}

/** Containers file-type names as video that recorders use for sound alone (MediaRecorder's WebM/Opus, Android's MP4 and 3GPP). */
const AUDIO_CONTAINERS: Record<string, string | undefined> = { 'video/webm': 'audio/webm', 'video/mp4': 'audio/mp4', 'video/3gpp': 'audio/3gpp' }

/** A safe display name: the last path segment, no control characters (C0, DEL, C1) nor bidirectional controls (which make `invoice<U+202E>fdp.exe` show as invoiceexe.pdf), at most 200 characters (code points, as `message` counts them: never half an emoji). */
export function cleanName(name: string | undefined): string | undefined {
  if (!name) return undefined
  const base = Array.from(
    basename(name.replace(/\\/g, '/'))
      .replace(/[\u0000-\u001f\u007f-\u009f]|[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '')
      .trim(),
  )
    .slice(0, 200)
    .join('')
  return base && base !== '.' && base !== '..' ? base : undefined
}

/** The name, with the type's extension appended when it has none, or a document's of another type (`download.php` of a PDF: `download.php.pdf`, which the phone opens); a default name for documents. */
function nameWithExtension(name: string | undefined, shape: MediaShape): string | undefined {
  const ext = shape.extension
  if (!name) return shape.kind === 'document' ? `arquivo${ext ? `.${ext}` : ''}` : undefined
  const fits =
    shape.kind === 'document'
      ? mimeOfFileName(name) === shape.mimetype.split(';')[0] || name.toLowerCase().endsWith(`.${ext}`)
      : /\.[a-z0-9]{1,10}$/i.test(name)
  return ext && !fits ? `${name}.${ext}` : name
}

/** Types a sniffer gives a family of formats (OLE compound files; zip archives), where a declared or named document type is more precise. */
const CONTAINERS = new Set(['application/x-cfb', 'application/zip'])
