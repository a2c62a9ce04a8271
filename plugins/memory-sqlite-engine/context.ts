/**
 * What a chunk is about beyond its own words: the words of its file's path
 * (`channels/telegram/transports.md` → "channels telegram transports"), the page title and the
 * headings it sits under. Indexed in their own FTS column with a higher weight, so a question
 * that names a page's subject ranks that page above one that merely mentions the words in
 * passing — a heading or a file name is what a person chose to call the thing.
 */
import type { Chunk } from '../../sdk/memory/index.js';

const HEADING = /^(#{1,6})\s+(.+?)\s*#*\s*$/;
const FENCE = /^\s*(```|~~~)/;

/** Path words, without the extension, the `memory` folder and date stamps (a date is no subject). */
export function pathWords(path: string): string {
  return path
    .replace(/\.md$/i, '')
    .split(/[/\\]/)
    .filter((part, index) => !(index === 0 && part.toLowerCase() === 'memory'))
    .map((part) => part.replace(/\d{4}-\d{2}-\d{2}/g, ' '))
    .join(' ')
    .replace(/[-_.]+/g, ' ')
    .trim();
}

/** The front matter's `title:`, when the file opens with one. */
function frontMatterTitle(lines: readonly string[]): string | undefined {
  if (lines[0]?.trim() !== '---') return undefined;
  for (let i = 1; i < lines.length && i < 40; i++) {
    const line = lines[i]!;
    if (line.trim() === '---') return undefined;
    const match = /^title:\s*["']?(.+?)["']?\s*$/.exec(line);
    if (match) return match[1];
  }
  return undefined;
}

/** For each chunk: path words, title and the trail of headings open at its first line. */
export function chunkContexts(path: string, text: string, chunks: readonly Pick<Chunk, 'startLine'>[]): string[] {
  const lines = text.split('\n');
  const title = frontMatterTitle(lines);
  const base = [pathWords(path), title].filter(Boolean).join(' ');
  // trailAt[n]: the headings open just before line n + 1 (1-based lines).
  const trailAt: string[] = [];
  const open: string[] = [];
  let fenced = false;
  for (const line of lines) {
    trailAt.push(open.filter(Boolean).join(' '));
    if (FENCE.test(line)) fenced = !fenced;
    if (fenced) continue;
    const match = HEADING.exec(line);
    if (!match) continue;
    const level = match[1]!.length;
    open.length = level;
    open[level - 1] = match[2]!;
  }
  return chunks.map((chunk) => [base, trailAt[chunk.startLine - 1] ?? ''].filter(Boolean).join(' '));
}
