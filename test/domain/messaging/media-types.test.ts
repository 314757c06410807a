import assert from 'node:assert/strict'
import { suite } from 'uvu'
import { mimeOfFileName, shapeOfFormat, shapeOfMime } from '../../../src/domain/messaging/media-types.ts'

const test = suite('media kinds from format, mime type and file name')

test('shapeOfFormat maps audio, voice note, video, image and document formats', () => {
  assert.deepEqual(shapeOfFormat('mp3'), { kind: 'audio', mimetype: 'audio/mpeg', extension: 'mp3' })
  assert.deepEqual(shapeOfFormat('OGG'), { kind: 'audio', mimetype: 'audio/ogg; codecs=opus', voiceNote: true, extension: 'ogg' })
  assert.deepEqual(shapeOfFormat('.mp4'), { kind: 'video', mimetype: 'video/mp4', extension: 'mp4' })
  assert.deepEqual(shapeOfFormat('jpeg'), { kind: 'image', mimetype: 'image/jpeg', extension: 'jpg' })
  assert.deepEqual(shapeOfFormat('docx'), {
    kind: 'document',
    mimetype: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    extension: 'docx',
  })
  assert.deepEqual(shapeOfFormat('abc'), { kind: 'document', mimetype: 'application/octet-stream', extension: 'abc' })
})

test('shapeOfFormat refuses values that are not an extension', () => {
  for (const format of ['', 'p n g', '../png', 'averyveryverylongformat', 'png;rm']) assert.equal(shapeOfFormat(format), undefined, format)
})

test('shapeOfMime sends WhatsApp inline types inline and everything else as a document', () => {
  assert.equal(shapeOfMime('image/png').kind, 'image')
  assert.equal(shapeOfMime('image/jpg').kind, 'image')
  assert.equal(shapeOfMime('video/mp4').kind, 'video')
  assert.equal(shapeOfMime('audio/x-m4a').kind, 'audio')
  assert.deepEqual(shapeOfMime('audio/ogg; codecs=opus'), { kind: 'audio', mimetype: 'audio/ogg; codecs=opus', voiceNote: true, extension: 'ogg' })
  assert.deepEqual(shapeOfMime('image/tiff'), { kind: 'document', mimetype: 'image/tiff', extension: 'tif' })
  assert.deepEqual(shapeOfMime('video/quicktime'), { kind: 'document', mimetype: 'video/quicktime', extension: 'mov' })
  assert.deepEqual(shapeOfMime('application/x-unknown'), { kind: 'document', mimetype: 'application/x-unknown' })
})

test('mimeOfFileName reads the extension', () => {
  assert.equal(mimeOfFileName('Relatório.PDF'), 'application/pdf')
  assert.equal(mimeOfFileName('song.mp3'), 'audio/mpeg')
  assert.equal(mimeOfFileName('noext'), undefined)
  assert.equal(mimeOfFileName(undefined), undefined)
})

test.run()
