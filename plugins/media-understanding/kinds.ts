/** Which kind of file an attachment is, from its MIME type, its name and its first bytes. */
import { extname } from 'node:path';
import type { MediaKind } from '../../sdk/index.js';

const EXTENSIONS: Record<string, MediaKind> = {
  '.png': 'image',
  '.jpg': 'image',
  '.jpeg': 'image',
  '.gif': 'image',
  '.webp': 'image',
  '.ogg': 'audio',
  '.oga': 'audio',
  '.opus': 'audio',
  '.mp3': 'audio',
  '.m4a': 'audio',
  '.wav': 'audio',
  '.flac': 'audio',
  '.mp4': 'video',
  '.mov': 'video',
  '.webm': 'video',
  '.mkv': 'video',
  '.pdf': 'document',
  '.txt': 'document',
  '.md': 'document',
  '.csv': 'document',
  '.json': 'document',
};

const TEXT_TYPES = /^(text\/|application\/(json|xml|x-yaml|yaml|csv|x-ndjson|javascript|x-sh|toml)\b)/;

/** The attachment's kind; undefined for a file the step does not read (an archive, an executable). */
export function kindOf(mimeType: string | undefined, name: string): MediaKind | undefined {
  const type = (mimeType ?? '').toLowerCase().split(';')[0]!.trim();
  if (type.startsWith('image/')) return 'image';
  if (type.startsWith('audio/')) return 'audio';
  if (type.startsWith('video/')) return 'video';
  if (type === 'application/pdf' || TEXT_TYPES.test(type)) return 'document';
  const byName = EXTENSIONS[extname(name).toLowerCase()];
  // A specific other type (application/zip) is believed; a generic one falls back to the name.
  return !type || type === 'application/octet-stream' || byName === 'document' ? byName : undefined;
}

/** A PDF, by its bytes ("%PDF-" within the first KB, as readers accept). */
export function isPdf(data: Buffer): boolean {
  return data.subarray(0, 1024).includes('%PDF-');
}

export function isPdfName(mimeType: string | undefined, name: string): boolean {
  return (mimeType ?? '').toLowerCase().startsWith('application/pdf') || extname(name).toLowerCase() === '.pdf';
}

/** Looks like text: valid UTF-8 with no NUL bytes in the first 8 KB. */
export function looksLikeText(data: Buffer): boolean {
  const head = data.subarray(0, 8192);
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, lastCompleteUtf8(head)));
    return true;
  } catch {
    return false;
  }
}

/** Where the last whole UTF-8 sequence of `data` ends (a cut multi-byte character is not an error). */
function lastCompleteUtf8(data: Buffer): number {
  let end = data.length;
  for (let back = 1; back <= 3 && end - back >= 0; back++) {
    const byte = data[end - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? end - back : end;
  }
  return end;
}
