/**
 * Drawing a QR code in the browser from its raw payload (the text a WhatsApp link hands out).
 * Its own module so the build splits it into a chunk that loads only when a QR is shown.
 */
import QRCode from 'qrcode';

/**
 * An SVG data URL: an <img> can show it under the page's CSP (img-src data:), with no markup
 * injected. Level L keeps WhatsApp's long linking strings to the smallest code.
 */
export async function qrDataUrl(payload: string): Promise<string> {
  const svg = await QRCode.toString(payload, { type: 'svg', margin: 2, errorCorrectionLevel: 'L' });
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
}
