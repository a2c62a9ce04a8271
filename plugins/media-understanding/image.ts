/**
 * Images for the model: checked to be images (bytes, not the claimed type), and shrunk with
 * sharp when an edge is over MAX_EDGE or the file is heavy, so a 12-megapixel photo costs
 * what a screen-sized one does.
 */
import { imageFormat, type ImagePart, type RuntimeDeps } from '../../sdk/index.js';
import { loadSharp } from './deps.js';

export const MAX_EDGE = 2048;
/** Files over this are re-encoded even when their edges fit. */
const MAX_INLINE_BYTES = 1.5 * 1024 * 1024;

export class NotAnImage extends Error {}

export interface PreparedImage {
  image: ImagePart;
  width?: number;
  height?: number;
  resized: boolean;
}

export async function prepareImage(data: Buffer, deps: RuntimeDeps, claimed?: string): Promise<PreparedImage> {
  const format = imageFormat(data);
  if (!format) throw new NotAnImage(`its bytes are not an image${claimed ? ` (though sent as ${claimed})` : ''}`);
  const sharp = await loadSharp(deps);
  // GIFs keep their first frame only: the model reads stills.
  const input = sharp(data, { failOn: 'error', limitInputPixels: 100_000_000 });
  const meta = await input.metadata().catch((error: Error) => {
    throw new NotAnImage(`it could not be decoded as ${format} (${error.message})`);
  });
  const width = meta.autoOrient?.width ?? meta.width;
  const height = meta.autoOrient?.height ?? meta.height;
  const tooLarge = Math.max(width ?? 0, height ?? 0) > MAX_EDGE;
  if (!tooLarge && data.length <= MAX_INLINE_BYTES && format !== 'image/gif') {
    return { image: { type: 'image', data: data.toString('base64'), mimeType: format }, width, height, resized: false };
  }
  const pipeline = input
    .rotate()
    .resize({ width: MAX_EDGE, height: MAX_EDGE, fit: 'inside', withoutEnlargement: true });
  const keepAlpha = meta.hasAlpha === true;
  const out = await (
    keepAlpha ? pipeline.png({ compressionLevel: 6 }) : pipeline.jpeg({ quality: 85, mozjpeg: false })
  ).toBuffer({ resolveWithObject: true });
  return {
    image: { type: 'image', data: out.data.toString('base64'), mimeType: keepAlpha ? 'image/png' : 'image/jpeg' },
    width: out.info.width,
    height: out.info.height,
    resized: true,
  };
}
