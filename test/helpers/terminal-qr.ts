import jsQR from 'jsqr'

/**
 * The text of a QR code drawn in a terminal with half-block characters (qrcode's `small` terminal
 * renderer: `▀`, `▄`, `█` and space, two modules a character, colours set with ANSI codes), or
 * undefined when none decodes. The drawing is turned back into a bitmap, each half-character dark when
 * its glyph covers it in black, and read with jsqr: what a phone's camera would read off the screen.
 */
export function readTerminalQr(drawing: string): string | undefined {
  const rows: boolean[][] = []
  for (const line of drawing.split('\n')) {
    const top: boolean[] = []
    const bottom: boolean[] = []
    let black = true
    for (const [, code, glyph] of line.matchAll(/\x1b\[(\d+)m|([^\x1b])/g)) {
      if (code !== undefined) {
        // 30: black foreground; 37: white; 0: reset (the default colours, light). Backgrounds (40, 47) only fill the half a glyph leaves.
        if (code === '30' || code === '37' || code === '0') black = code === '30'
        continue
      }
      top.push(black && (glyph === '▀' || glyph === '█'))
      bottom.push(black && (glyph === '▄' || glyph === '█'))
    }
    if (top.length > 0) rows.push(top, bottom)
  }
  const width = Math.max(0, ...rows.map(row => row.length))
  if (width === 0) return undefined
  const scale = 8
  const quiet = 4
  const side = (n: number) => (n + 2 * quiet) * scale
  const [w, h] = [side(width), side(rows.length)]
  const pixels = new Uint8ClampedArray(w * h * 4).fill(255)
  rows.forEach((row, y) =>
    row.forEach((dark, x) => {
      if (!dark) return
      for (let dy = 0; dy < scale; dy++) {
        for (let dx = 0; dx < scale; dx++) {
          const at = (((y + quiet) * scale + dy) * w + (x + quiet) * scale + dx) * 4
          pixels[at] = pixels[at + 1] = pixels[at + 2] = 0
        }
      }
    }),
  )
  // jsqr is CommonJS typed as an ES module: its function is `.default` of what Node imports.
  return jsQR.default(pixels, w, h)?.data
}
