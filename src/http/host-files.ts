import { open } from 'node:fs/promises'
import type { Context } from 'koa'
import { GatewayError } from '../errors.ts'
import type { UploadedFile } from '../operations/operation.ts'

/**
 * The files a host's own multipart parser took from the request, as the gateway's uploads: koa-body
 * (formidable: `ctx.request.files`, `{ field: File | File[] }`, each on disk at `filepath`) and
 * @koa/multer (`ctx.request.files` or `ctx.files`: `File[]` or `{ field: File[] }`, and `ctx.file`
 * for `.single()`; each in `buffer`, or on disk at `path`). Undefined when the host left none. A file
 * the gateway cannot read in full is refused (415), never dropped: a send-file without its file
 * would select another operation and send its name as a text. Past `limitBytes` in all: 413.
 */
export async function hostUploads(ctx: Context, limitBytes: number): Promise<Map<string, UploadedFile> | undefined> {
  const found = located(ctx)
  if (found.length === 0) return undefined
  const uploads = new Map<string, UploadedFile>()
  let total = 0
  for (const [field, file] of found) {
    const data = await contentOf(file, limitBytes - total)
    total += data.length
    const fileName = text(file.originalFilename ?? file.originalname ?? file.name)
    // As the gateway's own multipart reader: the last file of a field is its upload; a file input left empty (no name, no bytes) is none.
    if (fileName || data.length > 0) uploads.set(field, { data, fileName, mimetype: text(file.mimetype ?? file.type) })
  }
  return uploads.size > 0 ? uploads : undefined
}

/** Whether a host's multipart parser left files on the request, where hostUploads reads them (a shape it cannot read counts). */
export function hasHostFiles(ctx: Context): boolean {
  try {
    return located(ctx).length > 0
  } catch {
    return true
  }
}

// --- Internal helpers ---

/** The `[field, file]` pairs of a host parser's files, where koa-body and @koa/multer leave them (unread). */
function located(ctx: Context): [string, HostFile][] {
  const request = ctx.request as { files?: unknown; file?: unknown }
  const holder = ctx as { files?: unknown; file?: unknown }
  return [...entriesOf(request.files ?? holder.files), ...oneFile(request.file ?? holder.file)]
}

/** What a host parser's file object may hold (formidable and multer names). */
interface HostFile {
  fieldname?: unknown
  buffer?: unknown
  filepath?: unknown
  path?: unknown
  originalFilename?: unknown
  originalname?: unknown
  name?: unknown
  mimetype?: unknown
  type?: unknown
}

/** `[field, file]` pairs of a host's files: a list (each names its field) or files by field (a field's file, or its list). */
function entriesOf(files: unknown): [string, HostFile][] {
  if (files === undefined || files === null) return []
  if (Array.isArray(files)) return files.map(file => [fieldOf(file), file as HostFile])
  if (typeof files !== 'object') throw unreadable()
  return Object.entries(files).flatMap(([field, value]) =>
    (Array.isArray(value) ? value : [value]).map(file => [field, file as HostFile] as [string, HostFile]),
  )
}

/** The one file of multer's `.single()` (`ctx.file`), naming its field. */
function oneFile(file: unknown): [string, HostFile][] {
  return file === undefined || file === null ? [] : [[fieldOf(file), file as HostFile]]
}

function fieldOf(file: unknown): string {
  const field = (file as HostFile | null)?.fieldname
  if (typeof field !== 'string' || field === '') throw unreadable()
  return field
}

/** A host file's bytes: its buffer, or its file on disk read whole (no more than `room`). */
async function contentOf(file: HostFile, room: number): Promise<Buffer> {
  if (file === null || typeof file !== 'object') throw unreadable()
  if (Buffer.isBuffer(file.buffer)) {
    if (file.buffer.length > room) throw new GatewayError('body-too-large')
    return file.buffer
  }
  const path = typeof file.filepath === 'string' ? file.filepath : typeof file.path === 'string' ? file.path : undefined
  if (!path) throw unreadable()
  const handle = await open(path, 'r').catch((cause: unknown) => Promise.reject(unreadable(cause)))
  try {
    const { size } = await handle.stat()
    if (size > room) throw new GatewayError('body-too-large')
    return await handle.readFile()
  } finally {
    await handle.close()
  }
}

function unreadable(cause?: unknown): GatewayError {
  return new GatewayError('body-unsupported-type', cause === undefined ? {} : { cause })
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}
