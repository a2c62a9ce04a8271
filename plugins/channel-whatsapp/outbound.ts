/**
 * One outbound piece → WhatsApp message contents: Markdown turned into WhatsApp's own
 * markup, attachments read (URL, data: URL or local file, capped at `mediaMaxMb`) and sent
 * as image, video, voice note or document, the text riding along as the caption when it is
 * short enough.
 */
import { readFile, stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChannelSendError, type OutboundMessage } from '../../sdk/channels/index.js';
import type { WaOutbound } from './types.js';

/** WhatsApp clients cut captions long before the message limit. */
export const CAPTION_LIMIT = 1024;

/** **bold** → *bold*, ~~strike~~ → ~strike~, headings → bold; code is left alone. */
export function markdownToWhatsApp(text: string): string {
  return text
    .split(/(```[\s\S]*?```|`[^`\n]+`)/g)
    .map((part, index) =>
      index % 2 === 1
        ? part
        : part
            .replace(/^#{1,6}[ \t]+(.+?)[ \t]*#*$/gm, '*$1*')
            .replace(/\*\*(?=\S)(.+?)(?<=\S)\*\*/g, '*$1*')
            .replace(/__(?=\S)(.+?)(?<=\S)__/g, '*$1*')
            .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, '~$1~'),
    )
    .join('');
}

const MIME_BY_EXT: Record<string, string> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.ogg': 'audio/ogg; codecs=opus',
  '.opus': 'audio/ogg; codecs=opus',
  '.mp3': 'audio/mpeg',
  '.m4a': 'audio/mp4',
  '.wav': 'audio/wav',
  '.pdf': 'application/pdf',
  '.txt': 'text/plain',
};

export interface LoadedMedia {
  data: Buffer;
  mimeType: string;
  fileName: string;
}

const tooLarge = (what: string, maxBytes: number) =>
  new ChannelSendError(`whatsapp: ${what} is larger than mediaMaxMb (${Math.round(maxBytes / 1024 / 1024)} MB)`, {
    retryable: false,
  });

/** Read one attachment, refusing anything over `maxBytes` before it is all in memory. */
export async function loadMedia(url: string, maxBytes: number, mimeHint?: string): Promise<LoadedMedia> {
  const data = /^data:([^;,]*)(;base64)?,(.*)$/s.exec(url);
  if (data) {
    const bytes = data[2] ? Buffer.from(data[3]!, 'base64') : Buffer.from(decodeURIComponent(data[3]!));
    if (bytes.length > maxBytes) throw tooLarge('the attachment', maxBytes);
    return { data: bytes, mimeType: mimeHint ?? (data[1] || 'application/octet-stream'), fileName: 'file' };
  }
  if (/^https?:\/\//i.test(url)) {
    let response: Response;
    try {
      response = await fetch(url, { signal: AbortSignal.timeout(60_000) });
    } catch (error) {
      throw new ChannelSendError(`whatsapp: could not fetch ${url}: ${(error as Error).message}`, {
        retryable: true,
        cause: error,
      });
    }
    if (!response.ok || !response.body)
      throw new ChannelSendError(`whatsapp: fetching ${url} failed with HTTP ${response.status}`, {
        retryable: response.status >= 500,
      });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      if (size > maxBytes) throw tooLarge(url, maxBytes);
      chunks.push(Buffer.from(chunk));
    }
    const name = basename(new URL(url).pathname) || 'file';
    return {
      data: Buffer.concat(chunks),
      mimeType:
        mimeHint ??
        response.headers.get('content-type')?.split(';')[0] ??
        MIME_BY_EXT[extname(name).toLowerCase()] ??
        'application/octet-stream',
      fileName: name,
    };
  }
  const path = url.startsWith('file:') ? fileURLToPath(url) : url;
  let info;
  try {
    info = await stat(path);
  } catch {
    throw new ChannelSendError(`whatsapp: cannot send ${path}: no such file`, { retryable: false });
  }
  if (!info.isFile()) throw new ChannelSendError(`whatsapp: cannot send ${path}: not a file`, { retryable: false });
  if (info.size > maxBytes) throw tooLarge(path, maxBytes);
  return {
    data: await readFile(path),
    mimeType: mimeHint ?? MIME_BY_EXT[extname(path).toLowerCase()] ?? 'application/octet-stream',
    fileName: basename(path),
  };
}

/** The message content for an attachment: images, videos and audio natively, the rest as documents. */
export function mediaContent(media: LoadedMedia, caption: string | undefined, voice?: boolean): WaOutbound {
  const type = media.mimeType.toLowerCase();
  const withCaption = caption ? { caption: markdownToWhatsApp(caption) } : {};
  if (type.startsWith('image/') && type !== 'image/gif')
    return { image: media.data, mimetype: media.mimeType, ...withCaption };
  if (type.startsWith('video/') || type === 'image/gif')
    return { video: media.data, mimetype: type === 'image/gif' ? 'video/mp4' : media.mimeType, ...withCaption };
  // Ogg/Opus is what WhatsApp plays as a voice note; other audio goes as an audio file.
  if (type.startsWith('audio/'))
    return { audio: media.data, mimetype: media.mimeType, ptt: voice ?? type.startsWith('audio/ogg') };
  return { document: media.data, mimetype: media.mimeType, fileName: media.fileName, ...withCaption };
}

/** The contents one outbound piece becomes, in order. */
export async function outboundContents(message: OutboundMessage, maxBytes: number): Promise<WaOutbound[]> {
  const text = message.text?.trim() ? message.text : '';
  const media = message.media ?? [];
  // Voice notes show no caption: their text goes as its own message.
  const firstIsAudio =
    media[0] !== undefined &&
    /^audio\//i.test(media[0].mimeType ?? MIME_BY_EXT[extname(media[0].url.split('?')[0]!).toLowerCase()] ?? '');
  const captionFromText = media.length > 0 && text.length > 0 && text.length <= CAPTION_LIMIT && !firstIsAudio;
  const contents: WaOutbound[] = [];
  if (text && !captionFromText) contents.push({ text: markdownToWhatsApp(text) });
  for (const [index, item] of media.entries()) {
    const loaded = await loadMedia(item.url, maxBytes, item.mimeType);
    contents.push(
      mediaContent(loaded, item.caption ?? (index === 0 && captionFromText ? text : undefined), item.voice),
    );
  }
  return contents;
}
