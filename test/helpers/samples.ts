/** Small files whose type a sniffer recognises from their bytes. */

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
