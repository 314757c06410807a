/** Small files whose type a sniffer recognises from their bytes. */
import { crc32 } from 'node:zlib'

/** A 1x1 PNG. */
export const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64')

/** Bytes that start like a JPEG. */
export const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(100, 1)])

/** Bytes that start like an MP3 frame. */
export const MP3 = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(400)])

/** Bytes that start like an Ogg/Opus stream. */
export const OPUS = (() => {
  const bytes = Buffer.alloc(80)
  bytes.write('OggS', 0)
  bytes.write('OpusHead', 28)
  return bytes
})()

/** Bytes that start like an MP4 video. */
export const MP4 = (() => {
  const bytes = Buffer.alloc(64)
  bytes.writeUInt32BE(24, 0)
  bytes.write('ftypisom', 4)
  bytes.write('isom', 16)
  return bytes
})()

/** A minimal PDF. */
export const PDF = Buffer.from('%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n')

/** An OLE compound file's header (the container of .doc, .xls and .ppt): sniffed as `application/x-cfb`, whatever it holds. */
export const CFB = Buffer.concat([Buffer.from('D0CF11E0A1B11AE1', 'hex'), Buffer.alloc(600)])

/** Bytes that start like a WebM file (the EBML header, DocType webm): what a browser's MediaRecorder records a voice in (Opus in WebM); sniffed as `video/webm`. */
export const WEBM = Buffer.concat([Buffer.from('1a45dfa39f4286810142f7810142f2810442f381084282847765626d4287810442858102', 'hex'), Buffer.alloc(64)])

/** A zip archive holding the named entries, stored uncompressed (as a sniffer reads one: local headers, then the central directory). */
export function zipOf(entries: Record<string, string>): Buffer {
  const locals: Buffer[] = []
  const centrals: Buffer[] = []
  let offset = 0
  for (const [name, text] of Object.entries(entries)) {
    const [path, data] = [Buffer.from(name), Buffer.from(text)]
    // version needed, flags, method (stored), time, date; crc-32, sizes; name and extra lengths
    const common = Buffer.concat([u16(10), u16(0), u16(0), u16(0), u16(0), u32(crc32(data)), u32(data.length), u32(data.length), u16(path.length), u16(0)])
    const local = Buffer.concat([u32(0x04034b50), common, path, data])
    // comment length, disk, internal and external attributes, then where the local header is
    centrals.push(Buffer.concat([u32(0x02014b50), u16(10), common, u16(0), u16(0), u16(0), u32(0), u32(offset), path]))
    locals.push(local)
    offset += local.length
  }
  const directory = Buffer.concat(centrals)
  const count = u16(centrals.length)
  return Buffer.concat([...locals, directory, u32(0x06054b50), u16(0), u16(0), count, count, u32(directory.length), u32(offset), u16(0)])
}

/** A Word document as a sniffer knows it: a zip whose [Content_Types].xml names its main part. */
export const DOCX = zipOf({
  '[Content_Types].xml':
    '<Types><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
  'word/document.xml': '<w:document/>',
})

/** A zip the sniffer names only as a zip (no entry it knows a type by): also what it reports for an office file it cannot read further. */
export const ZIP = zipOf({ 'word/document.xml': '<w:document/>' })

function u32(value: number): Buffer {
  const bytes = Buffer.alloc(4)
  bytes.writeUInt32LE(value >>> 0, 0)
  return bytes
}

function u16(value: number): Buffer {
  const bytes = Buffer.alloc(2)
  bytes.writeUInt16LE(value, 0)
  return bytes
}
