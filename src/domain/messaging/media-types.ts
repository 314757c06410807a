import type { MediaKind } from '../../ports/transport.ts'

/** How a file goes out: its kind on the network, its mime type, whether it is a voice note. */
export interface MediaShape {
  kind: MediaKind
  mimetype: string
  voiceNote?: boolean
  /** Usual file extension of the type, when known. */
  extension?: string
}

/** The shape `format` (a file extension) forces: the inline kinds of FORMATS, any other extension a document; undefined for a non-extension. */
export function shapeOfFormat(format: string): MediaShape | undefined {
  const ext = format.trim().toLowerCase().replace(/^\./, '')
  if (!/^[a-z0-9]{1,10}$/.test(ext)) return undefined
  const known = FORMATS[ext]
  if (known) return { ...known, extension: ext === 'jpeg' ? 'jpg' : ext }
  return { kind: 'document', mimetype: DOCUMENT_MIMES[ext] ?? 'application/octet-stream', extension: ext }
}

/** The shape of a mime type: the image, video and audio types WhatsApp plays inline go as such, anything else as a document. */
export function shapeOfMime(mime: string): MediaShape {
  const type = mime.split(';')[0].trim().toLowerCase()
  for (const [ext, shape] of Object.entries(FORMATS)) {
    if (shape.mimetype.split(';')[0] === type || ALIASES[type] === ext) return { ...shape, extension: ext === 'jpeg' ? 'jpg' : ext }
  }
  const extension = Object.entries(DOCUMENT_MIMES).find(([, m]) => m === type)?.[0]
  return { kind: 'document', mimetype: type || 'application/octet-stream', ...(extension ? { extension } : {}) }
}

/** The mime type a file name's extension suggests, or undefined. */
export function mimeOfFileName(name: string | undefined): string | undefined {
  const ext = name && /\.([a-z0-9]{1,10})$/i.exec(name)?.[1]?.toLowerCase()
  if (!ext) return undefined
  return FORMATS[ext]?.mimetype.split(';')[0] ?? DOCUMENT_MIMES[ext]
}

const FORMATS: Record<string, Omit<MediaShape, 'extension'>> = {
  mp3: { kind: 'audio', mimetype: 'audio/mpeg' },
  m4a: { kind: 'audio', mimetype: 'audio/mp4' },
  aac: { kind: 'audio', mimetype: 'audio/aac' },
  amr: { kind: 'audio', mimetype: 'audio/amr' },
  ogg: { kind: 'audio', mimetype: 'audio/ogg; codecs=opus', voiceNote: true },
  opus: { kind: 'audio', mimetype: 'audio/ogg; codecs=opus', voiceNote: true },
  mp4: { kind: 'video', mimetype: 'video/mp4' },
  '3gp': { kind: 'video', mimetype: 'video/3gpp' },
  jpg: { kind: 'image', mimetype: 'image/jpeg' },
  jpeg: { kind: 'image', mimetype: 'image/jpeg' },
  png: { kind: 'image', mimetype: 'image/png' },
  webp: { kind: 'image', mimetype: 'image/webp' },
  gif: { kind: 'image', mimetype: 'image/gif' },
}

/** Other spellings of the inline types (as sniffers and servers report them). */
const ALIASES: Record<string, string> = {
  'audio/mp3': 'mp3',
  'audio/x-m4a': 'm4a',
  'audio/m4a': 'm4a',
  'audio/x-aac': 'aac',
  'audio/opus': 'opus',
  'audio/3gpp': 'amr',
  'video/3gpp2': '3gp',
  'image/jpg': 'jpg',
  'image/pjpeg': 'jpg',
}

const DOCUMENT_MIMES: Record<string, string> = {
  pdf: 'application/pdf',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation',
  txt: 'text/plain',
  csv: 'text/csv',
  json: 'application/json',
  xml: 'application/xml',
  html: 'text/html',
  rtf: 'application/rtf',
  zip: 'application/zip',
  rar: 'application/vnd.rar',
  '7z': 'application/x-7z-compressed',
  gz: 'application/gzip',
  tar: 'application/x-tar',
  epub: 'application/epub+zip',
  apk: 'application/vnd.android.package-archive',
  wav: 'audio/wav',
  mov: 'video/quicktime',
  avi: 'video/x-msvideo',
  mkv: 'video/x-matroska',
  webm: 'video/webm',
  bmp: 'image/bmp',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  svg: 'image/svg+xml',
  heic: 'image/heic',
}
