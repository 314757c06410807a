import assert from 'node:assert/strict'
import { DEVICE_PHONE, FRIEND, assertError, assertOk, inbox, sendingSuite, type SendingGateway } from '../helpers/messaging.ts'
import { CFB, DOCX, JPEG, MP3, MP4, OPUS, PDF, PNG, WEBM, ZIP } from '../helpers/samples.ts'

const test = sendingSuite('operation 9: send media', { mediaMaxBytes: 64 * 1024 })

const last = (g: SendingGateway) => inbox(g.network, FRIEND).at(-1)!

test('send media with base64 sends an image whose kind comes from the bytes, with file name and caption', async ({ g }) => {
  const body = assertOk(await g.send({ to: FRIEND, file: PNG.toString('base64'), message: 'foto.png', descricao: 'Nossa loja' }))
  assert.equal(body.message, 'Arquivo enviado.')
  assert.deepEqual(last(g), {
    id: body.id,
    from: DEVICE_PHONE,
    type: 'image',
    caption: 'Nossa loja',
    fileName: 'foto.png',
    mimetype: 'image/png',
    bytes: PNG.length,
  })
})

test('send media reads a base64 data URI', async ({ g }) => {
  assertOk(await g.send({ to: FRIEND, file: `data:application/pdf;base64,${PDF.toString('base64')}`, message: 'contrato' }))
  assert.deepEqual(without(last(g)), { type: 'document', fileName: 'contrato.pdf', mimetype: 'application/pdf', bytes: PDF.length })
})

test('send media reads a data URI with spaces after its semicolons, as browsers write a type with parameters (Firefox: audio/ogg; codecs=opus)', async ({
  g,
}) => {
  assertOk(await g.send({ to: FRIEND, file: `data:audio/ogg; codecs=opus;base64,${OPUS.toString('base64')}` }))
  assert.deepEqual(without(last(g)), { type: 'audio', mimetype: 'audio/ogg; codecs=opus', bytes: OPUS.length, voiceNote: true })
  const csv = Buffer.from('produto;preco\n')
  assertOk(await g.send({ to: FRIEND, file: `data:text/csv; charset=utf-8; base64,${csv.toString('base64')}`, message: 'precos' }))
  assert.deepEqual(without(last(g)), { type: 'document', fileName: 'precos.csv', mimetype: 'text/csv', bytes: csv.length })
})

test('send media sniffs the bytes rather than trusting the file name', async ({ g }) => {
  assertOk(await g.send({ to: FRIEND, file: JPEG.toString('base64'), message: 'relatorio.pdf' }))
  assert.deepEqual(without(last(g)), { type: 'image', fileName: 'relatorio.pdf', mimetype: 'image/jpeg', bytes: JPEG.length })
  assertOk(await g.send({ to: FRIEND, file: MP3.toString('base64') }))
  assert.deepEqual(without(last(g)), { type: 'audio', mimetype: 'audio/mpeg', bytes: MP3.length })
  assertOk(await g.send({ to: FRIEND, file: MP4.toString('base64') }))
  assert.deepEqual(without(last(g)), { type: 'video', mimetype: 'video/mp4', bytes: MP4.length })
  assertOk(await g.send({ to: FRIEND, file: OPUS.toString('base64') }))
  assert.deepEqual(without(last(g)), { type: 'audio', mimetype: 'audio/ogg; codecs=opus', bytes: OPUS.length, voiceNote: true })
})

test('send media with unknown bytes sends a document named arquivo', async ({ g }) => {
  assertOk(await g.send({ to: FRIEND, file: Buffer.from('just some plain text').toString('base64') }))
  assert.deepEqual(without(last(g)), { type: 'document', fileName: 'arquivo', mimetype: 'application/octet-stream', bytes: 20 })
})

test('send media types bytes no sniffer knows (text formats have no signature) by the file name given in message', async ({ g }) => {
  const csv = Buffer.from('produto;preco\ncafe;12,50\n')
  assertOk(await g.send({ to: FRIEND, file: csv.toString('base64'), message: 'vendas.csv' }))
  assert.deepEqual(without(last(g)), { type: 'document', fileName: 'vendas.csv', mimetype: 'text/csv', bytes: csv.length })
  assertOk(await g.send({ to: FRIEND, file: new File([csv], 'upload.bin'), message: 'pedidos.txt' }, 'multipart'))
  assert.deepEqual(without(last(g)), { type: 'document', fileName: 'pedidos.txt', mimetype: 'text/plain', bytes: csv.length })
})

test('send media sends bytes no sniffer knows as a document, whatever image or audio type they claim', async ({ g }) => {
  const text = Buffer.from('<html>not an image</html>')
  assertOk(await g.send({ to: FRIEND, file: `data:image/jpeg;base64,${text.toString('base64')}`, message: 'foto' }))
  assert.deepEqual(without(last(g)), { type: 'document', fileName: 'foto.jpg', mimetype: 'image/jpeg', bytes: text.length })
  assertOk(await g.send({ to: FRIEND, file: `data:audio/ogg;base64,${text.toString('base64')}` }))
  assert.deepEqual(without(last(g)), { type: 'document', fileName: 'arquivo.ogg', mimetype: 'audio/ogg', bytes: text.length })
})

test("send media names a document of a type only the sniffer knows (RAR, AVI, FLAC) with the sniffer's extension, and keeps a name already ending in its type's extension", async ({
  g,
}) => {
  const rar = Buffer.concat([Buffer.from('Rar!\x1a\x07\x01\x00', 'latin1'), Buffer.alloc(40, 1)])
  const avi = Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00AVI LIST', 'latin1'), Buffer.alloc(40, 0)])
  const flac = Buffer.concat([Buffer.from('fLaC\x00\x00\x00\x22', 'latin1'), Buffer.alloc(40, 0)])
  const cases: [Buffer, string | undefined, string, string][] = [
    [rar, undefined, 'arquivo.rar', 'application/x-rar-compressed'],
    [rar, 'backup', 'backup.rar', 'application/x-rar-compressed'],
    [rar, 'backup.rar', 'backup.rar', 'application/x-rar-compressed'],
    [rar, 'backup.RAR', 'backup.RAR', 'application/x-rar-compressed'],
    [avi, 'aula', 'aula.avi', 'video/vnd.avi'],
    [flac, undefined, 'arquivo.flac', 'audio/x-flac'],
  ]
  for (const [bytes, message, fileName, mimetype] of cases) {
    assertOk(await g.send({ to: FRIEND, file: bytes.toString('base64'), ...(message ? { message } : {}) }))
    assert.deepEqual(without(last(g)), { type: 'document', fileName, mimetype, bytes: bytes.length }, message)
  }
  // A format TYPES does not know: a name already ending in its extension keeps it (it was 'dados.xyz.xyz').
  assertOk(await g.send({ to: FRIEND, file: PDF.toString('base64'), format: 'xyz', message: 'dados.xyz' }))
  assert.equal(last(g).fileName, 'dados.xyz')
})

test('send media keeps only the last path segment of a file name, without C0 or C1 control characters', async ({ g }) => {
  assertOk(await g.send({ to: FRIEND, file: PDF.toString('base64'), message: '..\\..\\etc/re\u0007la\u0085to\u009brio\n.pdf' }))
  assert.equal(last(g).fileName, 'relatorio.pdf')
})

test('send media drops bidirectional controls from a file name (given or uploaded), so `invoice<U+202E>fdp.exe` cannot show as invoiceexe.pdf', async ({
  g,
}) => {
  const spoof = 'invoice\u202Efdp.exe'
  assertOk(await g.send({ to: FRIEND, file: PDF.toString('base64'), message: spoof }))
  assert.equal(last(g).fileName, 'invoicefdp.exe.pdf')
  assertOk(await g.send({ to: FRIEND, file: new File([PDF], spoof, { type: 'application/pdf' }) }, 'multipart'))
  assert.equal(last(g).fileName, 'invoicefdp.exe.pdf')
  // Every bidi format character (LRM, RLM, ALM, embeddings, overrides, isolates) goes; joiners that emoji and scripts need stay.
  const marks = '\u200E\u200F\u061C\u202A\u202B\u202C\u202D\u202E\u2066\u2067\u2068\u2069'
  assertOk(await g.send({ to: FRIEND, file: PDF.toString('base64'), message: `re${marks}la\u200Ctório 👩\u200D💻.pdf` }))
  assert.equal(last(g).fileName, 'rela\u200Ctório 👩\u200D💻.pdf')
})

test('send media keeps a long file name whole up to 200 characters counted as code points, and cuts a longer one between characters, never inside an emoji', async ({
  g,
}) => {
  const name = 'a'.repeat(199) + '📄' // 200 code points: the longest name `message` takes
  assertOk(await g.send({ to: FRIEND, file: PDF.toString('base64'), message: name }))
  assert.equal(last(g).fileName, `${name}.pdf`)
  assertOk(await g.send({ to: FRIEND, file: new File([PDF], `${'b'.repeat(199)}📄📄.pdf`, { type: 'application/pdf' }) }, 'multipart'))
  assert.equal(last(g).fileName, `${'b'.repeat(199)}📄.pdf`)
})

test('send media with format forces the kind: mp3 audio, ogg voice note, mp4 video, png image, pdf and others document', async ({ g }) => {
  const cases: [string, Buffer, Record<string, unknown>][] = [
    ['mp3', MP3, { type: 'audio', mimetype: 'audio/mpeg' }],
    ['ogg', OPUS, { type: 'audio', mimetype: 'audio/ogg; codecs=opus', voiceNote: true }],
    ['opus', OPUS, { type: 'audio', mimetype: 'audio/ogg; codecs=opus', voiceNote: true }],
    ['ogg', MP3, { type: 'audio', mimetype: 'audio/mpeg', voiceNote: true }],
    ['mp4', MP4, { type: 'video', mimetype: 'video/mp4' }],
    ['PNG', PNG, { type: 'image', mimetype: 'image/png' }],
    ['jpg', PNG, { type: 'image', mimetype: 'image/jpeg' }],
    ['pdf', PDF, { type: 'document', mimetype: 'application/pdf', fileName: 'arquivo.pdf' }],
    ['.xlsx', ZIP, { type: 'document', mimetype: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', fileName: 'arquivo.xlsx' }],
    ['xyz', PDF, { type: 'document', mimetype: 'application/octet-stream', fileName: 'arquivo.xyz' }],
  ]
  for (const [format, bytes, expected] of cases) {
    assertOk(await g.send({ to: FRIEND, file: bytes.toString('base64'), format }))
    assert.deepEqual(without(last(g)), { ...expected, bytes: bytes.length }, format)
  }
})

test('send media refuses an audio, video or image format for bytes of another kind (a PDF or an image is no voice note): 401, nothing sent', async ({ g }) => {
  const text = Buffer.from('produto;preco\n')
  const cases: [string, Buffer][] = [
    ['ogg', PDF],
    ['opus', PNG],
    ['ogg', text],
    ['mp3', PDF],
    ['m4a', JPEG],
    ['mp4', PNG],
    ['3gp', PDF],
    ['png', PDF],
    ['jpg', MP4],
  ]
  for (const [format, bytes] of cases) {
    const answer = await g.send({ to: FRIEND, file: bytes.toString('base64'), format, message: 'arquivo' })
    assert.deepEqual([answer.status, answer.body], [401, { status: 401, message: 'validation.required' }], format)
  }
  assert.deepEqual(g.network.inbox(FRIEND), [])
})

test("send media takes an audio format for audio in a container file-type calls video (a browser's WebM voice, an MP4 recording): sent as audio of its own type, never labelled Opus", async ({
  g,
}) => {
  const cases: [string, Buffer, Record<string, unknown>][] = [
    ['ogg', WEBM, { type: 'audio', mimetype: 'audio/webm', voiceNote: true }],
    ['opus', MP4, { type: 'audio', mimetype: 'audio/mp4', voiceNote: true }],
    ['m4a', MP4, { type: 'audio', mimetype: 'audio/mp4' }],
  ]
  for (const [format, bytes, expected] of cases) {
    const answer = await g.send({ to: FRIEND, file: bytes.toString('base64'), format })
    assert.deepEqual([answer.status, answer.body.message], [200, 'Arquivo enviado.'], format)
    assert.deepEqual(without(last(g)), { ...expected, bytes: bytes.length }, format)
  }
})

test('send media refuses a document format for bytes file-type knows as another type (a PNG is no PDF): 401, nothing sent', async ({ g }) => {
  const cases: [string, Buffer][] = [
    ['pdf', PNG],
    ['pdf', JPEG],
    ['docx', PDF],
    ['.xlsx', PDF],
    ['xlsx', DOCX],
    ['pdf', DOCX],
    ['pdf', CFB],
    ['zip', PDF],
    ['mov', PNG],
  ]
  for (const [format, bytes] of cases) {
    const answer = await g.send({ to: FRIEND, file: bytes.toString('base64'), format, message: 'contrato' })
    assert.deepEqual([answer.status, answer.body], [401, { status: 401, message: 'validation.required' }], format)
  }
  assert.deepEqual(g.network.inbox(FRIEND), [])
})

test('send media takes a document format for bytes of its type, its container (a docx file-type reads only as a zip) or that file-type does not know', async ({
  g,
}) => {
  const text = Buffer.from('produto;preco\n')
  const cases: [string, Buffer, string, string][] = [
    ['docx', DOCX, 'contrato.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
    ['docx', ZIP, 'contrato.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
    ['zip', DOCX, 'contrato.zip', 'application/zip'],
    ['doc', CFB, 'contrato.doc', 'application/msword'],
    ['csv', text, 'contrato.csv', 'text/csv'],
    ['pdf', text, 'contrato.pdf', 'application/pdf'],
    ['mov', MP4, 'contrato.mov', 'video/quicktime'],
  ]
  for (const [format, bytes, fileName, mimetype] of cases) {
    assertOk(await g.send({ to: FRIEND, file: bytes.toString('base64'), format, message: 'contrato' }))
    assert.deepEqual(without(last(g)), { type: 'document', fileName, mimetype, bytes: bytes.length }, format)
  }
})

test('send media drops the caption of audio (WhatsApp shows none) and keeps it for documents', async ({ g }) => {
  assertOk(await g.send({ to: FRIEND, file: MP3.toString('base64'), descricao: 'ouça' }))
  assert.equal(last(g).caption, undefined)
  assertOk(await g.send({ to: FRIEND, file: PDF.toString('base64'), descricao: 'leia' }))
  assert.equal(last(g).caption, 'leia')
})

test('send media takes an uploaded multipart file', async ({ g }) => {
  const file = new File([PNG], 'logo.png', { type: 'image/png' })
  const body = assertOk(await g.send({ to: FRIEND, file, descricao: 'logo' }, 'multipart'))
  assert.deepEqual(last(g), { id: body.id, from: DEVICE_PHONE, type: 'image', caption: 'logo', fileName: 'logo.png', mimetype: 'image/png', bytes: PNG.length })
})

test("an uploaded file keeps a non-ASCII name as browsers, curl and fetch write it (the part's UTF-8 bytes), not read as Latin-1", async ({ g }) => {
  for (const fileName of ['relatório de ações.pdf', 'تقرير.pdf', '报告📄.pdf']) {
    assertOk(await g.send({ to: FRIEND, file: new File([PDF], fileName, { type: 'application/pdf' }) }, 'multipart'))
    assert.deepEqual(without(last(g)), { type: 'document', fileName, mimetype: 'application/pdf', bytes: PDF.length })
  }
})

test('send media gives the same answer and delivery for JSON, urlencoded and multipart bodies', async ({ g }) => {
  const base64 = PNG.toString('base64')
  const answers = []
  answers.push(await g.send({ to: FRIEND, file: base64, message: 'a.png', descricao: 'x' }, 'json'))
  answers.push(await g.send({ to: FRIEND, file: base64, message: 'a.png', descricao: 'x' }, 'form'))
  answers.push(await g.send({ to: FRIEND, file: base64, message: 'a.png', descricao: 'x' }, 'multipart'))
  answers.push(await g.send({ to: FRIEND, file: new File([PNG], 'a.png'), descricao: 'x' }, 'multipart'))
  for (const answer of answers) assert.deepEqual({ ...assertOk(answer), id: 'ID' }, { status: 200, message: 'Arquivo enviado.', id: 'ID' })
  const entries = inbox(g.network, FRIEND).map(({ id, ...entry }) => entry)
  assert.equal(entries.length, 4)
  for (const entry of entries) assert.deepEqual(entry, entries[0])
  for (const [i, entry] of inbox(g.network, FRIEND).entries()) assert.equal(entry.id, answers[i].body.id)
})

test('send media refuses a file over mediaMaxBytes with 413 and a clear message', async ({ g }) => {
  const big = Buffer.alloc(64 * 1024 + 1, 7)
  assertError(await g.send({ to: FRIEND, file: big.toString('base64') }), 413, 'Arquivo maior que o limite permitido. (0.1 MB)')
  assertError(await g.send({ to: FRIEND, file: new File([big], 'big.bin') }, 'multipart'), 413, 'Arquivo maior que o limite permitido. (0.1 MB)')
  assertOk(await g.send({ to: FRIEND, file: Buffer.alloc(64 * 1024, 7).toString('base64') }))
})

test('send media never reads a local path: a path or file URL is 401 validation.required', async ({ g }) => {
  for (const file of ['/etc/passwd', 'file:///etc/passwd', './package.json', 'C:\\Windows\\win.ini', '~/.ssh/id_rsa', 'ftp://example.com/a.png']) {
    assertError(await g.send({ to: FRIEND, file }), 401, 'validation.required')
  }
  assert.deepEqual(g.network.inbox(FRIEND), [])
})

test('send media answers 401 validation.required for bad base64, an empty file (data URI or upload), an unknown format or a missing to', async ({ g }) => {
  assertError(await g.send({ to: FRIEND, file: 'not base64!' }), 401, 'validation.required')
  assertError(await g.send({ to: FRIEND, file: 'data:image/png;base64,' }), 401, 'validation.required')
  assertError(await g.send({ to: FRIEND, file: 'data:image/png;base64, \n' }), 401, 'validation.required')
  assertError(await g.send({ to: FRIEND, file: new File([], 'vazio.png', { type: 'image/png' }) }, 'multipart'), 401, 'validation.required')
  assertError(await g.send({ to: FRIEND, file: PNG.toString('base64'), format: 'p n g' }), 401, 'validation.required')
  assertError(await g.send({ file: PNG.toString('base64') }), 401, 'validation.required')
  assertError(await g.send({ authkey: 'nope', to: FRIEND, file: PNG.toString('base64') }), 401, 'validation.required')
})

test('send media answers 404 for an appkey of another account and 409 for a disconnected device', async ({ g }) => {
  const other = await g.t.register()
  const device = await g.t.addDevice(other.authkey, 'outra')
  assertError(await g.send({ appkey: device.appkey, to: FRIEND, file: PNG.toString('base64') }), 404, 'Nenhum dispositivo encontrado.')
  await g.t.addDevice(g.authkey, 'offline')
  assertError(await g.send({ appkey: 'offline', to: FRIEND, file: PNG.toString('base64') }), 409, 'Dispositivo desconectado.')
})

test.run()

// --- Internal helpers ---

function without(entry: Record<string, unknown>): Record<string, unknown> {
  const { id: _id, from: _from, ...rest } = entry
  return rest
}
