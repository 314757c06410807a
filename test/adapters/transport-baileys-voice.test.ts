import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Logger } from '../../src/logger.ts'
import { setupBaileys, type SetupOptions } from '../helpers/baileys-setup.ts'
import type { SentRecord } from '../helpers/fake-baileys/index.ts'

const voice = suite('Baileys transport: voice notes (ptt) are OGG/Opus or ordinary audio, never unplayable')

const BOB = '5511888880000'
/** The start of an Ogg stream whose first packet is an Opus header. */
const OGG_OPUS = Buffer.concat([Buffer.from('OggS'), Buffer.alloc(24), Buffer.from('OpusHead'), Buffer.alloc(40, 7)])
const MP3 = Buffer.concat([Buffer.from('ID3'), Buffer.alloc(60, 1)])

/**
 * A stand-in for ffmpeg (the machine has none): a script that records its arguments and input and
 * answers `output` (or fails with `exit`). The adapter spawns it exactly as it would spawn ffmpeg.
 */
async function fakeFfmpeg(output: Buffer, exit = 0) {
  const dir = await mkdtemp(join(tmpdir(), 'fake-ffmpeg-'))
  await writeFile(join(dir, 'out'), output)
  const path = join(dir, 'ffmpeg')
  await writeFile(path, `#!/bin/sh\nprintf '%s\\n' "$@" > '${dir}/args'\ncat > '${dir}/input'\ncat '${dir}/out'\nexit ${exit}\n`)
  await chmod(path, 0o755)
  return {
    path,
    args: async () => (await readFile(join(dir, 'args'), 'utf8').catch(() => '')).trim().split('\n').filter(Boolean),
    input: () => readFile(join(dir, 'input')).catch(() => undefined),
    remove: () => rm(dir, { recursive: true, force: true }),
  }
}

async function sendVoice(options: SetupOptions, data: Buffer, mimetype: string) {
  const warnings: string[] = []
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (_obj: unknown, msg?: string) => void warnings.push(msg ?? ''),
    error: () => undefined,
  }
  const s = await setupBaileys({ ...options, logger })
  await s.linked('dev', '5511999990000')
  await s.transport.send('dev', BOB, { kind: 'media', media: 'audio', voiceNote: true, file: { data, mimetype } })
  const record = s.fake.sent('dev').at(-1) as Extract<SentRecord, { via: 'sendMessage' }>
  await s.transport.stop()
  return { content: record.content, warnings }
}

voice('a voice note already in OGG/Opus (by its bytes) goes out as ptt as it is; ffmpeg is not run', async () => {
  const ffmpeg = await fakeFfmpeg(Buffer.alloc(0), 1)
  try {
    const { content } = await sendVoice({ ffmpegPath: ffmpeg.path }, OGG_OPUS, 'audio/ogg')
    assert.equal(content, { audio: OGG_OPUS, mimetype: 'audio/ogg; codecs=opus', ptt: true })
    assert.equal(await ffmpeg.args(), [], 'not spawned')
  } finally {
    await ffmpeg.remove()
  }
})

voice('a voice note in another format is transcoded with ffmpeg to OGG/Opus (mono, 48 kHz, libopus) and goes out as ptt', async () => {
  const converted = Buffer.concat([OGG_OPUS, Buffer.from('transcoded')])
  const ffmpeg = await fakeFfmpeg(converted)
  try {
    const { content } = await sendVoice({ ffmpegPath: ffmpeg.path }, MP3, 'audio/mpeg')
    assert.equal(content, { audio: converted, mimetype: 'audio/ogg; codecs=opus', ptt: true })
    assert.equal(await ffmpeg.input(), MP3, 'the original bytes on stdin')
    const args = (await ffmpeg.args()).join(' ')
    for (const part of ['-i pipe:0', '-ac 1', '-ar 48000', '-c:a libopus', '-f ogg pipe:1']) assert.ok(args.includes(part), `${part} in: ${args}`)
  } finally {
    await ffmpeg.remove()
  }
})

voice('without ffmpeg (not installed, or turned off) the voice note goes out as an ordinary audio file with its own type, and a warning says so', async () => {
  for (const ffmpegPath of [join(tmpdir(), 'no-such-dir', 'ffmpeg'), false] as const) {
    const { content, warnings } = await sendVoice({ ffmpegPath }, MP3, 'audio/mpeg')
    assert.equal(content, { audio: MP3, mimetype: 'audio/mpeg' }, `ffmpegPath ${ffmpegPath}: no ptt flag`)
    assert.ok(
      warnings.some(w => /ordinary audio file/.test(w)),
      warnings.join('\n'),
    )
  }
})

voice('ffmpeg failing, or answering something that is not OGG/Opus, also falls back to an ordinary audio file', async () => {
  for (const [output, exit] of [
    [Buffer.from('broken'), 1],
    [Buffer.from('not an ogg stream at all, just bytes'), 0],
  ] as const) {
    const ffmpeg = await fakeFfmpeg(output, exit)
    try {
      const { content, warnings } = await sendVoice({ ffmpegPath: ffmpeg.path }, MP3, 'audio/mpeg')
      assert.equal(content, { audio: MP3, mimetype: 'audio/mpeg' })
      assert.ok(warnings.some(w => /ordinary audio file/.test(w)))
    } finally {
      await ffmpeg.remove()
    }
  }
})

voice.run()
