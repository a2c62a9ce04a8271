/**
 * The linking QR as an image for the web UI (what `web.login.start` answers as `qrDataUrl`):
 * an SVG data: URL from the qrcode package, error correction level L (the smallest code for
 * WhatsApp's long linking strings), a two-module quiet zone and 6 px per module. qrcode
 * loads on the first code shown, not with the plugin.
 */
const QUIET = 2;
const MODULE_PX = 6;

export async function qrToSvgDataUrl(text: string): Promise<string> {
  const QRCode = await import('qrcode');
  const options = { errorCorrectionLevel: 'L', margin: QUIET } as const;
  // The image's own size follows the code's, as a phone camera needs at least a few pixels per module.
  const width = (QRCode.create(text, options).modules.size + QUIET * 2) * MODULE_PX;
  const svg = await QRCode.toString(text, { ...options, type: 'svg', width });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}
