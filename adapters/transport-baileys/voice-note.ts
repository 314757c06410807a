import { spawn } from 'node:child_process'
import type { Logger } from 'zapgate'

/** The audio a send carries: a voice note (`ptt`, OGG/Opus) or an ordinary audio file. */
interface PreparedAudio {
  data: Buffer
  mimetype: string
  ptt: boolean
}

/** What a voice note needs: ffmpeg (a path or name on the PATH, or false), a deadline, a logger. */
interface VoiceNoteDeps {
  ffmpegPath: string | false
  timeoutMs: number
  logger: Logger
}

/**
 * WhatsApp plays a voice note (`ptt`) only from OGG/Opus. Audio that already is OGG/Opus (by its
 * bytes, not its declared type) goes out as is; anything else is transcoded with ffmpeg (mono, 48 kHz,
 * libopus, as phones record them). Without ffmpeg, or when it fails, the audio goes out as an
 * ordinary audio file with its own type, and a warning says why: it still arrives and plays, but
 * not as a voice note. Sending the unconverted bytes as `ptt` would show a voice note that cannot play.
 */
export async function prepareVoiceNote(data: Buffer, mimetype: string, deps: VoiceNoteDeps): Promise<PreparedAudio> {
  if (isOggOpus(data)) return { data, mimetype: 'audio/ogg; codecs=opus', ptt: true }
  if (deps.ffmpegPath !== false && !missing.has(deps.ffmpegPath)) {
    try {
      const converted = await transcode(deps.ffmpegPath, data, deps.timeoutMs)
      if (isOggOpus(converted)) return { data: converted, mimetype: 'audio/ogg; codecs=opus', ptt: true }
      deps.logger.warn({ bytes: converted.length }, 'ffmpeg gave no OGG/Opus audio; the voice note goes out as an ordinary audio file')
    } catch (err) {
      if ((err as { code?: unknown }).code === 'ENOENT') missing.add(deps.ffmpegPath)
      deps.logger.warn(
        { err, ffmpeg: deps.ffmpegPath },
        'could not transcode a voice note to OGG/Opus (is ffmpeg installed?); it goes out as an ordinary audio file',
      )
    }
  } else {
    deps.logger.warn({ mimetype }, 'a voice note that is not OGG/Opus goes out as an ordinary audio file (no ffmpeg)')
  }
  return { data, mimetype: mimetype || 'audio/mp4', ptt: false }
}

/** Whether `data` is an Ogg stream whose first logical stream is Opus. */
function isOggOpus(data: Buffer): boolean {
  return data.length > 36 && data.subarray(0, 4).toString('latin1') === 'OggS' && data.subarray(28, 36).toString('latin1') === 'OpusHead'
}

// --- Internal helpers ---

/** ffmpeg paths found missing (ENOENT), so that every later voice note does not spawn in vain. */
const missing = new Set<string>()

function transcode(ffmpeg: string, input: Buffer, timeoutMs: number): Promise<Buffer> {
  const args = [
    '-hide_banner',
    '-loglevel',
    'error',
    '-i',
    'pipe:0',
    '-vn',
    '-map_metadata',
    '-1',
    '-ac',
    '1',
    '-ar',
    '48000',
    '-c:a',
    'libopus',
    '-b:a',
    '32k',
    '-application',
    'voip',
    '-f',
    'ogg',
    'pipe:1',
  ]
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpeg, args, { stdio: ['pipe', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    let errors = ''
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString('utf8')).slice(-2_000)))
    child.on('error', error => {
      clearTimeout(timer)
      reject(error)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) resolve(Buffer.concat(out))
      else reject(new Error(`ffmpeg ${signal ? `was killed (${signal}, over ${timeoutMs} ms)` : `exited with ${code}`}: ${errors.trim()}`))
    })
    child.stdin.on('error', () => undefined) // ffmpeg may stop reading early; its exit code tells
    child.stdin.end(input)
  })
}
