import { supportedExtensions, supportedMimeTypes } from 'file-type'
import type { MediaKind } from '../../ports/transport.ts'

/** How a file goes out: its kind on the network, its mime type, whether it is a voice note. */
export interface MediaShape {
  kind: MediaKind
  mimetype: string
  voiceNote?: boolean
  /** Usual file extension of the type, when known. */
  extension?: string
}

/** The shape `format` (a file extension) forces: the inline kinds of TYPES, any other extension a document; undefined for a non-extension. */
export function shapeOfFormat(format: string): MediaShape | undefined {
  const ext = format.trim().toLowerCase().replace(/^\./, '')
  if (!/^[a-z0-9]{1,10}$/.test(ext)) return undefined
  return shapeOf(ext === 'jpeg' ? 'jpg' : ext, TYPES[ext] ?? ['application/octet-stream'])
}

/** The shape of a mime type: the image, video and audio types WhatsApp plays inline go as such, anything else as a document. */
export function shapeOfMime(mime: string): MediaShape {
  const type = mime.split(';')[0].trim().toLowerCase()
  const known = Object.entries(TYPES).find(([, [m, , aliases]]) => m.split(';')[0] === type || aliases?.includes(type))
  return known ? shapeOf(...known) : { kind: 'document', mimetype: type || 'application/octet-stream' }
}

/** The mime type a file name's extension suggests, or undefined. */
export function mimeOfFileName(name: string | undefined): string | undefined {
  const ext = name && /\.([a-z0-9]{1,10})$/i.exec(name)?.[1]?.toLowerCase()
  return ext ? TYPES[ext]?.[0].split(';')[0] : undefined
}

/** Whether bytes the sniffer reads as `sniffed` can go labelled as the forced document `shape`: yes when it does not know them (text, CSV, a PDF with bytes before its header) or cannot recognise the type (TXT, CSV, JSON, HTML, .doc: nothing disproves it; a format TYPES does not know goes untyped), else only for its own type, any of the kind of an image, video or audio type (an MP4 as `mov`), or its container either way (a docx is a zip, and the sniffer reads some only as a zip). A PNG is no PDF, a PDF no docx. */
export function fitsDocumentFormat(shape: MediaShape, sniffed: { ext: string; mime: string } | undefined): boolean {
  const mime = shape.mimetype.split(';')[0]!
  const format = shape.extension ?? ''
  const checkable = TYPES[format] !== undefined && (supportedMimeTypes.has(mime) || supportedExtensions.has(format))
  if (!sniffed || !checkable || sniffed.ext === format || shapeOfMime(sniffed.mime).mimetype === mime) return true
  const family = mime.split('/')[0]!
  if (['image', 'video', 'audio'].includes(family) && sniffed.mime.startsWith(`${family}/`)) return true
  return Boolean(CONTAINS[format]?.has(sniffed.ext) || CONTAINS[sniffed.ext]?.has(format))
}

/** Types whose files are also files of another the sniffer may report instead (its extension: theirs): office and other zip-based formats are zips (the sniffer names them by an entry inside, else just zip), an APK a signed jar, an Illustrator file a PDF. */
const CONTAINS: Record<string, Set<string>> = {
  zip: new Set('docx docm dotx dotm xlsx xlsm xltx xltm pptx pptm potx potm ppsx ppsm vsdx odt ott ods ots odp otp odg otg epub 3mf jar xpi apk'.split(' ')),
  jar: new Set(['apk']),
  pdf: new Set(['ai']),
}

function shapeOf(extension: string, [mimetype, kind = 'document']: Type): MediaShape {
  return { kind, mimetype, extension, ...(mimetype.includes('codecs=opus') ? { voiceNote: true } : {}) }
}

/** Extension: mime type, the kind WhatsApp plays inline (else a document), other spellings of the type (as sniffers and servers report them). */
type Type = [mime: string, kind?: MediaKind, aliases?: string[]]
const TYPES: Record<string, Type> = {
  mp3: ['audio/mpeg', 'audio', ['audio/mp3']],
  m4a: ['audio/mp4', 'audio', ['audio/x-m4a', 'audio/m4a']],
  aac: ['audio/aac', 'audio', ['audio/x-aac']],
  amr: ['audio/amr', 'audio', ['audio/3gpp']],
  ogg: ['audio/ogg; codecs=opus', 'audio'],
  opus: ['audio/ogg; codecs=opus', 'audio', ['audio/opus']],
  mp4: ['video/mp4', 'video'],
  '3gp': ['video/3gpp', 'video', ['video/3gpp2']],
  jpg: ['image/jpeg', 'image', ['image/jpg', 'image/pjpeg']],
  jpeg: ['image/jpeg', 'image'],
  png: ['image/png', 'image'],
  webp: ['image/webp', 'image'],
  gif: ['image/gif', 'image'],
  pdf: ['application/pdf'],
  doc: ['application/msword'],
  docx: ['application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
  xls: ['application/vnd.ms-excel'],
  xlsx: ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
  ppt: ['application/vnd.ms-powerpoint'],
  pptx: ['application/vnd.openxmlformats-officedocument.presentationml.presentation'],
  odt: ['application/vnd.oasis.opendocument.text'],
  ods: ['application/vnd.oasis.opendocument.spreadsheet'],
  odp: ['application/vnd.oasis.opendocument.presentation'],
  txt: ['text/plain'],
  csv: ['text/csv'],
  json: ['application/json'],
  xml: ['application/xml'],
  html: ['text/html'],
  rtf: ['application/rtf'],
  zip: ['application/zip'],
  rar: ['application/vnd.rar'],
  '7z': ['application/x-7z-compressed'],
  gz: ['application/gzip'],
  tar: ['application/x-tar'],
  epub: ['application/epub+zip'],
  apk: ['application/vnd.android.package-archive'],
  wav: ['audio/wav'],
  mov: ['video/quicktime'],
  avi: ['video/x-msvideo'],
  mkv: ['video/x-matroska'],
  webm: ['video/webm'],
  bmp: ['image/bmp'],
  tif: ['image/tiff'],
  tiff: ['image/tiff'],
  svg: ['image/svg+xml'],
  heic: ['image/heic'],
}
