/** Write `qr` as a QR code drawn with block characters (for a terminal) to `output`. */
export async function printQr(qr: string, output: { write(text: string): unknown }, label: string): Promise<void> {
  const { default: QRCode } = await import('qrcode')
  const drawing = await QRCode.toString(qr, { type: 'terminal', small: true })
  output.write(`${label}\n${drawing}\n`)
}
