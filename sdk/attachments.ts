/**
 * Attachments as gateway methods receive them (`{ content: base64 | data: URL, mimeType? }`),
 * decoded and checked once for every method that takes them. Images go to the model inline;
 * audio (a voice note recorded in the browser) is saved as a file, owner-only, and reaches
 * the agent as an attachment for the media-understanding step to transcribe.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { JsonSchema } from '../kernel/index.js';
import { writeFileAtomic } from './fs.js';
import { ErrorCodes } from './protocol/constants.js';
import { ProtocolError } from './protocol/frames.js';
import type { InboundMedia } from './types/channels.js';

export interface AttachmentParam {
  type?: 'image' | 'audio';
  mimeType?: string;
  fileName?: string;
  content: string;
}

/** The largest audio attachment a method takes (decoded bytes). */
export const MAX_AUDIO_ATTACHMENT_BYTES = 20 * 1024 * 1024;

/** The schema of an `attachments` param (AttachmentParam[]): at most `maxItems`, images only unless `audio`. */
export function imageAttachmentsSchema(maxItems: number, options: { audio?: boolean } = {}): JsonSchema {
  return {
    type: 'array',
    maxItems,
    items: {
      type: 'object',
      required: ['content'],
      additionalProperties: false,
      properties: {
        type: options.audio ? { enum: ['image', 'audio'] } : { const: 'image' },
        mimeType: { type: 'string', pattern: options.audio ? '^(image|audio)/' : '^image/' },
        fileName: { type: 'string', maxLength: 255 },
        content: { type: 'string', minLength: 1, description: 'base64, or a data: URL' },
      },
    },
  };
}

interface Decoded {
  data: string;
  mimeType: string;
  fileName?: string;
}

function decode(attachment: AttachmentParam, index: number, kinds: readonly string[]): Decoded {
  const dataUrl = /^data:([^;,]+)(?:;[^;,=]+=[^;,]*)*;base64,(.*)$/s.exec(attachment.content);
  const mimeType = (dataUrl?.[1] ?? attachment.mimeType)?.toLowerCase();
  if (!mimeType || !kinds.some((kind) => mimeType.startsWith(`${kind}/`)))
    throw new ProtocolError(
      ErrorCodes.INVALID_REQUEST,
      `attachments[${index}]: give mimeType (${kinds.map((kind) => `${kind}/…`).join(', ')}) or a data: URL`,
    );
  const data = (dataUrl?.[2] ?? attachment.content).replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(data))
    throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `attachments[${index}].content is not base64`);
  return { data, mimeType, ...(attachment.fileName ? { fileName: attachment.fileName } : {}) };
}

/** The images, or a protocol error naming the attachment that is wrong. */
export function decodeImageAttachments(attachments: readonly AttachmentParam[] | undefined): Decoded[] {
  return (attachments ?? []).map((attachment, index) => decode(attachment, index, ['image']));
}

const AUDIO_EXTENSIONS: Record<string, string> = {
  'audio/webm': 'webm',
  'audio/ogg': 'ogg',
  'audio/opus': 'opus',
  'audio/mpeg': 'mp3',
  'audio/mp4': 'm4a',
  'audio/aac': 'aac',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/flac': 'flac',
};

/**
 * Images and audio: images come back inline; every audio attachment is checked (size, base64)
 * before any is written, then saved atomically, owner-only, in `dir` and returned as the
 * dispatch's `attachments` (a local path the media step reads).
 */
export function acceptMediaAttachments(
  attachments: readonly AttachmentParam[] | undefined,
  dir: string,
): { images: Decoded[]; files: InboundMedia[] } {
  const decoded = (attachments ?? []).map((attachment, index) => decode(attachment, index, ['image', 'audio']));
  const audio = decoded.flatMap((item, index) => {
    if (!item.mimeType.startsWith('audio/')) return [];
    const bytes = Buffer.from(item.data, 'base64');
    if (bytes.length === 0)
      throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `attachments[${index}] (${item.mimeType}) is empty`);
    if (bytes.length > MAX_AUDIO_ATTACHMENT_BYTES)
      throw new ProtocolError(
        ErrorCodes.INVALID_REQUEST,
        `attachments[${index}] is ${Math.ceil(bytes.length / 1024 / 1024)} MB; audio attachments are limited to ${MAX_AUDIO_ATTACHMENT_BYTES / 1024 / 1024} MB`,
      );
    return [{ item, bytes }];
  });
  const files = audio.map(({ item, bytes }) => {
    const base = item.mimeType.split(';')[0]!;
    const path = join(dir, `${Date.now()}-${randomUUID().slice(0, 8)}.${AUDIO_EXTENSIONS[base] ?? 'bin'}`);
    writeFileAtomic(path, bytes);
    return { url: path, mimeType: base, ...(item.fileName ? { fileName: item.fileName } : {}) };
  });
  return { images: decoded.filter((item) => item.mimeType.startsWith('image/')), files };
}

/** The image format the bytes really are (PNG, JPEG, GIF, WebP), whatever a MIME type claims; undefined otherwise. */
export function imageFormat(data: Buffer): 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp' | undefined {
  if (data.length >= 8 && data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'image/png';
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (data.length >= 6 && /^GIF8[79]a$/.test(data.subarray(0, 6).toString('latin1'))) return 'image/gif';
  if (
    data.length >= 12 &&
    data.subarray(0, 4).toString('latin1') === 'RIFF' &&
    data.subarray(8, 12).toString('latin1') === 'WEBP'
  )
    return 'image/webp';
  return undefined;
}
